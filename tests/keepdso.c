/* tests/keepdso.c - dlclose() that keeps the library loaded, preloaded (LD_PRELOAD) into the
 * sanitizer stage's tests by scripts/test; test code, never installed.
 *
 * Open MPI 4.1 and hwloc unload their plugins when they finalize (4.1 has no
 * mca_base_component_disable_dlclose; 5.0 added it), and LeakSanitizer then finds a plugin's
 * leaked allocation in "<unknown module>": it cannot match it to tests/lsan.supp, and looks
 * the module up again (reading /proc/self/maps) for every such frame. The stage used the full
 * (slow) unwinder to reach MPI frames further up each stack, at 3.3 CPU-s a two-rank launch
 * here; with the plugins kept loaded the fast unwinder's first frame names the plugin and the
 * launch costs 0.6 CPU-s (doc/TESTING.md). */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
