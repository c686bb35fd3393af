"""``perf_report``/``Benchmark``: sweep a benchmark function over arguments, print, save and plot the results.

Works without pandas and matplotlib: the results are a :class:`Table` (``return_df=True`` gives a pandas
DataFrame when pandas is installed), and plots are drawn only when matplotlib is installed.
"""
from __future__ import annotations

import csv
import os
import sys
from typing import Any, Callable, Optional, Sequence


class Benchmark:
    """One sweep: ``x_names`` take each of ``x_vals``; for each, one line per value of ``line_arg`` in
    ``line_vals``; ``args`` stay fixed. The benchmarked function returns a number or (mean, min, max)."""

    def __init__(self, x_names: Sequence[str], x_vals: Sequence[Any], line_arg: str, line_vals: Sequence[Any],
                 line_names: Sequence[str], plot_name: str, args: Optional[dict] = None, xlabel: str = "",
                 ylabel: str = "", x_log: bool = False, y_log: bool = False, styles: Any = None) -> None:
        if len(line_names) != len(line_vals):
            raise ValueError(f"Benchmark {plot_name!r}: {len(line_vals)} line_vals but {len(line_names)} line_names")
        self.x_names = list(x_names)
        self.x_vals = list(x_vals)
        self.x_log = x_log
        self.line_arg = line_arg
        self.line_vals = list(line_vals)
        self.line_names = list(line_names)
        self.y_log = y_log
        self.styles = styles
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.plot_name = plot_name
        self.args = dict(args or {})


class Table:
    """Rows of results with named columns; prints like a DataFrame."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self.rows: list[list[Any]] = []

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def select(self, names: list[str]) -> "Table":
        idx = [self.columns.index(n) for n in names]
        out = Table(names)
        out.rows = [[r[i] for i in idx] for r in self.rows]
        return out

    def to_string(self) -> str:
        cells = [[""] + self.columns] + [[str(i)] + [_fmt(v) for v in r] for i, r in enumerate(self.rows)]
        widths = [max(len(row[c]) for row in cells) for c in range(len(cells[0]))]
        return "\n".join(" ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in cells)

    def to_csv(self, path: str, precision: int = 6) -> None:
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.columns)
            for r in self.rows:
                w.writerow([f"{v:.{precision}f}" if isinstance(v, float) else v for v in r])

    def to_pandas(self) -> Any:
        import pandas as pd
        return pd.DataFrame(self.rows, columns=self.columns)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return self.to_string()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6f}"
    return str(v)


class Mark:
    """A benchmark function with its sweeps; ``run`` executes them."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Any) -> None:
        self.fn = fn
        self.benchmarks = benchmarks

    def _run(self, bench: Benchmark, save_path: str, show_plots: bool, print_data: bool, diff_col: bool = False,
             save_precision: int = 6, **kwargs: Any) -> Table:
        unit = f" ({bench.ylabel})"
        means = [f"{n}{unit}" for n in bench.line_names]
        mins = [f"{n}-min{unit}" for n in bench.line_names]
        maxs = [f"{n}-max{unit}" for n in bench.line_names]
        table = Table(bench.x_names + means + mins + maxs)
        for x in bench.x_vals:
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            if len(xs) != len(bench.x_names):
                raise ValueError(f"Benchmark {bench.plot_name!r}: expected {len(bench.x_names)} values, got {x}")
            row_mean, row_min, row_max = [], [], []
            for y in bench.line_vals:
                ret = self.fn(**dict(zip(bench.x_names, xs)), **{bench.line_arg: y}, **bench.args, **kwargs)
                try:
                    mean, lo, hi = ret
                except TypeError:
                    mean, lo, hi = ret, None, None
                row_mean.append(mean)
                row_min.append(lo)
                row_max.append(hi)
            table.rows.append(xs + row_mean + row_min + row_max)
        if bench.plot_name and (show_plots or save_path):
            _plot(bench, table, means, mins, maxs, show_plots, save_path)
        shown = table.select(bench.x_names + means)
        if diff_col and len(shown.columns) == 2:
            shown.columns.append("Diff")
            for r in shown.rows:
                r.append(r[1] - r[0])
        if print_data:
            print(bench.plot_name + ":")
            print(shown.to_string())
        if save_path:
            shown.to_csv(os.path.join(save_path, f"{bench.plot_name}.csv"), save_precision)
        return shown

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str = "", return_df: bool = False,
            **kwargs: Any) -> Any:
        single = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if single else list(self.benchmarks)
        if save_path:
            os.makedirs(save_path, exist_ok=True)
        results = []
        try:
            for bench in benchmarks:
                results.append(self._run(bench, save_path, show_plots, print_data, **kwargs))
        finally:
            if save_path:
                with open(os.path.join(save_path, "results.html"), "w") as html:
                    html.write("<html><body>\n")
                    for bench in benchmarks[:len(results)]:
                        html.write(f"<image src=\"{bench.plot_name}.png\"/>\n")
                    html.write("</body></html>\n")
        if not return_df:
            return None
        out = [_as_frame(t) for t in results]
        return out[0] if single else out


def _as_frame(t: Table) -> Any:
    try:
        return t.to_pandas()
    except ImportError:
        return t


_warned_no_plot = False


def _plot(bench: Benchmark, table: Table, means: list[str], mins: list[str], maxs: list[str], show: bool,
          save_path: str) -> None:
    global _warned_no_plot
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        if not _warned_no_plot:
            print("perf_report: matplotlib is not installed; printing data only (pip install matplotlib for "
                  "plots)", file=sys.stderr)
            _warned_no_plot = True
        return
    plt.figure()
    ax = plt.subplot()
    xs = table.column(bench.x_names[0])
    for i, (m, lo, hi) in enumerate(zip(means, mins, maxs)):
        color = bench.styles[i][0] if bench.styles else None
        style = bench.styles[i][1] if bench.styles else None
        ax.plot(xs, table.column(m), label=m, color=color, ls=style)
        los, his = table.column(lo), table.column(hi)
        if all(v is not None for v in los + his):
            ax.fill_between(xs, [float(v) for v in los], [float(v) for v in his], alpha=0.15, color=color)
    ax.legend()
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    if show:
        plt.show()
    if save_path:
        plt.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))


def perf_report(benchmarks: Any) -> Callable[[Callable[..., Any]], Mark]:
    """Decorate a benchmark function; ``.run(print_data=True, ...)`` on the result runs the sweeps."""
    return lambda fn: Mark(fn, benchmarks)
