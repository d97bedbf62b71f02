"""The API's typed results: a report as the CLI writes it (`data`), with the figures a caller reads
most, a table (`rows`, `to_frame`) and a notebook view."""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from qmltest.util import writers as report


class Result:
    """A report as the CLI writes it (`data`), with the figures a caller reads most."""

    kind = "report"

    def __init__(self, data: dict, timing: dict | None = None, text: str | None = None) -> None:
        self.data, self.timing, self._text = data, timing or {}, text

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def to_json(self) -> str:
        """The report's JSON text, as `--json` writes it (a finished run replayed: the text it read)."""
        return self._text if self._text is not None else report.to_json(self.data)

    def rows(self) -> list[dict]:
        """The report's table, one dict per row (what `to_frame` shows)."""
        return [{k: v for k, v in self.data.items() if not isinstance(v, (dict, list))}]

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (pandas is optional: ImportError names it)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas ships with the dev extra
            raise ImportError("to_frame needs pandas: pip install pandas") from exc
        return pd.DataFrame(self.rows())

    def summary(self) -> str:
        return self.kind

    def overview(self) -> list[dict]:
        """The rows a notebook shows (`_repr_html_`): `rows()` unless a result has a shorter view."""
        return self.rows()

    def _repr_html_(self) -> str:
        rows = self.overview()
        cols = list(rows[0]) if rows else []
        cell = 'style="border:1px solid #ccc;padding:2px 8px;text-align:{}"'
        head = "".join(f"<th {cell.format('left')}>{html.escape(str(c))}</th>" for c in cols)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td {cell.format('right' if isinstance(r.get(c), (int, float)) else 'left')}>"
                f"{html.escape(_cell(r.get(c)))}</td>"
                for c in cols
            )
            + "</tr>"
            for r in rows[:50]
        )
        more = f"<p>{len(rows) - 50} more rows (.rows(), .to_frame())</p>" if len(rows) > 50 else ""
        table = f'<table style="border-collapse:collapse"><tr>{head}</tr>{body}</table>'
        return f"<p><b>{html.escape(self.summary())}</b></p>{table}{more}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.summary()}>"


def _cell(v: Any) -> str:
    """A value as a table shows it: floats (and intervals of them) to 4 significant digits."""
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, float) for x in v):
        return "[" + ", ".join(f"{x:.4g}" for x in v) + "]"
    return "" if v is None else str(v)


class MutationResult(Result):
    """`mutate`'s report: the first suite's score and interval, per-operator rows, survivors."""

    kind = "mutation"

    @property
    def score(self) -> float | None:
        return self.data["mutation_score"]

    @property
    def interval(self) -> list[float] | None:
        return self.data.get("sampling", {}).get("interval") or self.data.get("mutation_score_interval")

    @property
    def survivors(self) -> list[dict]:
        """The mutants no test killed: id, operator and site."""
        return [
            {k: m[k] for k in ("id", "operator", "site")} for m in self.data["mutants"] if m["status"] == "survived"
        ]

    def rows(self) -> list[dict]:
        return [{k: m[k] for k in ("id", "operator", "site", "status")} for m in self.data["mutants"]]

    def overview(self) -> list[dict]:
        """Per operator: how many mutants ended in each status (the full list is `rows()`)."""
        ops = self.data.get("operators", {})
        statuses = sorted({k for row in ops.values() for k in row})
        return [{"operator": op, **{k: row.get(k, 0) for k in statuses}} for op, row in sorted(ops.items())]

    def summary(self) -> str:
        lo_hi = self.interval
        inside = f" [{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else ""
        score = "n/a" if self.score is None else f"{self.score:.3f}"
        return f"mutation score {score}{inside}, {len(self.data['mutants'])} mutants, {len(self.survivors)} survived"


class EvaluationResult(Result):
    kind = "evaluation"

    @property
    def accuracy(self) -> float:
        return self.data["accuracy"]

    @property
    def interval(self) -> list[float]:
        return self.data["accuracy_interval"]

    def rows(self) -> list[dict]:
        if self.data.get("task") == "regression":
            keys = ("mse", "mae", "r2")
            return [{"metric": k, "value": self.data[k], "interval": self.data[f"{k}_interval"]} for k in keys]
        return [{"class": c, **r} for c, r in self.data["per_class"].items()]

    def summary(self) -> str:
        if self.data.get("task") == "regression":
            from qmltest.util.intervals import fmt_g

            names = (("mse", "MSE"), ("mae", "MAE"), ("r2", "R^2"))
            parts = [f"{label} {fmt_g(self.data[k], self.data[f'{k}_interval'])}" for k, label in names]
            return ", ".join(parts) + f" on {self.data['samples']} inputs"
        lo, hi = self.interval
        return f"accuracy {self.accuracy:.3f} [{lo:.3f}, {hi:.3f}] on {self.data['samples']} inputs"


class PredictionResult(Result):
    """Per-input predictions (`api.predict`): one row per input, its class scores as columns."""

    kind = "predictions"

    @property
    def regression(self) -> bool:
        return self.data.get("task") == "regression"

    @property
    def predictions(self) -> list:
        """Predicted class names, or a regressor's outputs."""
        return [r["output" if self.regression else "prediction"] for r in self.data["rows"]]

    def rows(self) -> list[dict]:
        if self.regression:
            return [dict(r) for r in self.data["rows"]]
        return [
            {k: v for k, v in r.items() if k != "scores"}
            | {f"{self.data['score'][0]}_{c}": s for c, s in r["scores"].items()}
            for r in self.data["rows"]
        ]

    def to_csv(self) -> str:
        """The rows as CSV: index, label, prediction, correct, then one score column per class
        (p_CLASS for probabilities, e_CLASS for an expectation readout's scores), 17 digits."""
        import csv
        import io

        rows = self.rows()
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        if self.regression:
            head = ["index", "target", "output", "error"]
        else:
            head = ["index", "label", "prediction", "correct"] + [
                f"{self.data['score'][0]}_{c}" for c in self.data["classes"]
            ]
        writer.writerow(head)
        for r in rows:
            writer.writerow(["" if r[k] is None else (repr(r[k]) if isinstance(r[k], float) else r[k]) for k in head])
        return buf.getvalue()

    def summary(self) -> str:
        if self.regression:
            err = [r["error"] for r in self.data["rows"] if r["error"] is not None]
            tail = f", RMSE {float(np.sqrt(np.mean(np.square(err)))):.4g}" if err else ""
            return f"{len(self.data['rows'])} outputs{tail}"
        right = [r["correct"] for r in self.data["rows"] if r["correct"] is not None]
        tail = f", {sum(right)} of {len(right)} correct" if right else ""
        return f"{len(self.data['rows'])} predictions{tail}"


class CoverageResult(Result):
    kind = "coverage"

    @property
    def totals(self) -> dict[str, float]:
        return self.data["totals"]

    def rows(self) -> list[dict]:
        return [{"part": p["part"], "inputs": p["cumulative_inputs"], **p["cumulative"]} for p in self.data["parts"]]

    def summary(self) -> str:
        return "coverage " + ", ".join(f"{k} {100 * v:.2f}%" for k, v in self.totals.items())


class ProfileResult(Result):
    kind = "profile"

    def rows(self) -> list[dict]:
        return [{"states": len(self.data.get("states", []))}]

    def summary(self) -> str:
        return f"profile of {self.data.get('meta', {}).get('model', 'a model')}"


class FuzzResult(Result):
    kind = "fuzz"

    def rows(self) -> list[dict]:
        guides = self.data.get("guides") or {}
        return [
            {"guide": g, **{k: v for k, v in r.items() if not isinstance(v, (dict, list))}} for g, r in guides.items()
        ]

    def summary(self) -> str:
        return "fuzzing " + ", ".join(f"{r['guide']} TSR {r.get('tsr', 0):.3f}" for r in self.rows())


class DiffResult(Result):
    kind = "diff"

    def summary(self) -> str:
        return f"{self.data['disagree']} of {self.data['inputs']} inputs disagree"
