# TPB_GPU_VENDORS: the GPU vendors of the registry, src/backend/vendors.inc (a line
# "include src/backend/NAME/Makefile.inc" each). For each NAME: config/tpb_NAME.m4 is
# included and its TPB_CHECK_NAME (upper case) called, which must set tpb_have_NAME (yes or
# no) and tpb_NAME_summary (its line in configure's summary) and AC_SUBST NAME_CPPFLAGS,
# NAME_LDFLAGS and NAME_LIBS (empty where it is not built). This macro then defines the
# conditional TPB_HAVE_NAME and, where built, the config.h symbol of that name; gathers the
# flags of all into TPB_GPU_CPPFLAGS and TPB_GPU_LIBS (Makefile.am); lists the classes in
# config.h's TPB_GPU_VENDOR_ROWS (backend.h: a TPB_GPU_VENDOR(NAME) each, tpb_backend_NAME
# its class); and sets tpb_backends_built and tpb_vendors_summary for the summary.
# TPB_GPU_M4 names the vendors' m4 files for the Makefile's CONFIGURE_DEPENDENCIES (which
# reruns autoconf when one or the registry changes, and ships them): they are included
# through m4_indir, which automake's trace does not see.
AC_DEFUN([TPB_GPU_VENDORS], [
m4_define([_TPB_VENDORS], m4_esyscmd_s([sed -n 's|^include src/backend/\([a-z0-9_]*\)/Makefile\.inc$|\1|p' src/backend/vendors.inc | tr '\n' ' ']))
m4_if(_TPB_VENDORS, [], [m4_fatal([src/backend/vendors.inc names no vendor])])
tpb_backends_built=host
tpb_vendors_summary=
TPB_GPU_CPPFLAGS=
TPB_GPU_LIBS=
m4_foreach_w([_tpb_v], _TPB_VENDORS, [_TPB_GPU_VENDOR(_tpb_v, m4_toupper(_tpb_v))])
AC_DEFINE([TPB_GPU_VENDOR_ROWS], m4_map_args_w(_TPB_VENDORS, [[TPB_GPU_VENDOR(]], [[)]], [[ ]]),
  [The GPU vendors of src/backend/vendors.inc, a TPB_GPU_VENDOR(NAME) each.])
AC_SUBST([TPB_GPU_CPPFLAGS])
AC_SUBST([TPB_GPU_LIBS])
TPB_GPU_M4='m4_map_args_w(_TPB_VENDORS, [[$(top_srcdir)/config/tpb_]], [[.m4]], [[ ]])'
AC_SUBST([TPB_GPU_M4])
])

# _TPB_GPU_VENDOR(NAME, UPPER): one vendor of the registry (its file is included by name,
# through m4_indir: aclocal would read the unexpanded name as a file).
m4_define([_TPB_GPU_VENDOR], [
m4_indir([m4_include], [config/tpb_$1.m4])
TPB_CHECK_$2
AM_CONDITIONAL([TPB_HAVE_$2], [test "x$tpb_have_$1" = xyes])
AS_IF([test "x$tpb_have_$1" = xyes], [
  AC_DEFINE([TPB_HAVE_$2], [1], [Define to 1 to build the $1 backend.])
  tpb_backends_built="$tpb_backends_built, $1"])
TPB_GPU_CPPFLAGS="$TPB_GPU_CPPFLAGS \$($2_CPPFLAGS)"
TPB_GPU_LIBS="$TPB_GPU_LIBS \$($2_LDFLAGS) \$($2_LIBS)"
tpb_vendors_summary="$tpb_vendors_summary
`printf '  %-17s: %s' $2 "$tpb_$1_summary"`"
])
