"""JUnit XML for CI test-report viewers (GitLab, Jenkins, GitHub actions). Mutation: one
testsuite per test suite, one testcase per scored mutant; a surviving mutant is a failure (the
suite did not detect it), an undecided one is skipped. Coverage: one testcase per criterion, a
failure when it is below its --fail-under bar. Written as a string; callers place it."""

from __future__ import annotations

from xml.etree import ElementTree as ET


def mutation(result: dict) -> str:
    root = ET.Element("testsuites", name=f"qmltest mutate ({result['meta']['criterion']})")
    total = failures = skipped = 0
    for suite in result["suites"]:
        ts = ET.SubElement(root, "testsuite", name=suite)
        n = f = s = 0
        for m in result["mutants"]:
            v = m["verdicts"].get(suite)
            if v is None:
                continue
            n += 1
            case = ET.SubElement(ts, "testcase", classname=f"{suite}.{m['operator']}", name=f"{m['id']} {m['site']}")
            if v.get("undecided"):
                s += 1
                ET.SubElement(case, "skipped", message="undecided: the shot budget ran out")
            elif not v["killed"]:
                f += 1
                failure = ET.SubElement(case, "failure", message="survived", type="SurvivedMutant")
                failure.text = f"mutant {m['id']} ({m['operator']}: {m['site']}) was not killed by {suite}"
        ts.set("tests", str(n))
        ts.set("failures", str(f))
        ts.set("errors", "0")
        ts.set("skipped", str(s))
        total, failures, skipped = total + n, failures + f, skipped + s
    return _closed(root, total, failures, skipped)


def coverage(result: dict, gates: dict[str, float], name: str) -> str:
    """One testsuite (the covered suite `name`), one testcase per criterion with its value; a
    criterion under its gate (a fraction) fails, naming the value and the bar."""
    root = ET.Element("testsuites", name="qmltest cover")
    ts = ET.SubElement(root, "testsuite", name=name)
    failures = 0
    for criterion, value in sorted(result["totals"].items()):
        case = ET.SubElement(ts, "testcase", classname=f"{name}.coverage", name=criterion)  # stable: the history
        bar = gates.get(criterion)
        if bar is not None and value < bar:
            failures += 1
            failure = ET.SubElement(case, "failure", message="below the bar", type="CoverageGate")
            failure.text = f"{criterion} {100 * value:.2f}% < {100 * bar:.2f}%"
        ET.SubElement(case, "system-out").text = f"{criterion} {100 * value:.2f}%"  # the value, beside the name
    for key, value in (("tests", len(result["totals"])), ("failures", failures), ("errors", 0), ("skipped", 0)):
        ts.set(key, str(value))
    return _closed(root, len(result["totals"]), failures, 0)


def _closed(root: ET.Element, total: int, failures: int, skipped: int) -> str:
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("skipped", str(skipped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
