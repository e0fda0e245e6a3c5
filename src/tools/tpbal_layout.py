"""tpbal_layout: what matplotlib reports of a figure's layout, checked as it lays it out:
the (legend, data artist) pairs that overlap, after moving a legend that covers data beside or
under its axes (fit_legends). tpbal_plots.save records it per plot in LAYOUT;
tpbal-report writes LAYOUT into plots.json; tests/mpi/report.sh requires 0 everywhere."""
# name -> what the plotting library reports of the figure's layout: the data artists a
# legend covers (0 everywhere: tpbal-report writes it to plots.json, the tests read it)
LAYOUT = {}


def covers(box, artist):
    """Whether the display-space box covers any of a data artist: a line's path (points and
    the segments between them), a patch, a collection's paths (bars, spans, error bars) or
    its markers' positions."""
    from matplotlib.collections import Collection, PathCollection
    from matplotlib.lines import Line2D
    if isinstance(artist, Line2D):
        path = artist.get_transform().transform_path(artist.get_path())
        return path.intersects_bbox(box, filled=False)
    if isinstance(artist, PathCollection):  # markers: where they are, not their shape
        pts = artist.get_offset_transform().transform(artist.get_offsets())
        return any(box.contains(x, y) for x, y in pts)
    if isinstance(artist, Collection):
        t = artist.get_transform()
        return any(t.transform_path(p).intersects_bbox(box) for p in artist.get_paths())
    return artist.get_window_extent().overlaps(box)


def legend_over_data(fig):
    """How many (legend, data artist) pairs overlap in the figure as matplotlib lays it out:
    every legend (an axes' or the figure's) against the lines, bars, error bars and markers
    of every axes (a legend beside one axes can lie over its neighbour's). 0: none."""
    fig.canvas.draw()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    data = [a for ax in fig.axes for a in list(ax.lines) + list(ax.patches) +
            list(ax.collections) if a.get_visible()]
    return int(sum(bool(covers(leg.get_window_extent(), a)) for leg in legends for a in data))


def _move_legends(fig, where):
    """Every axes' legend drawn again beside its axes (right) or under it (below)."""
    for ax in fig.axes:
        leg = ax.get_legend()
        if not leg:
            continue
        hs = getattr(leg, "legend_handles", None) or getattr(leg, "legendHandles", [])
        texts = leg.get_texts()
        labels = [t.get_text() for t in texts]
        size = texts[0].get_fontsize() if texts else 7
        if where == "right":
            ax.legend(hs, labels, fontsize=size, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        else:
            ax.legend(hs, labels, fontsize=size, loc="upper center",
                      bbox_to_anchor=(0.5, -0.25), ncol=min(3, max(1, len(labels))))


def fit_legends(fig):
    """legend_over_data, after moving the legends off the data where they cover some: beside
    their axes, else under them (the layout with the fewest pairs kept). What a plot's
    legend placement ("best" inside the axes) cannot promise for every run's data, this
    checks on the data drawn. Returns the pairs left (0: none)."""
    n = legend_over_data(fig)
    for where in ("right", "below"):
        if n == 0:
            break
        _move_legends(fig, where)
        n = legend_over_data(fig)
    return n
