"""JUnit XML for CI test-report viewers (GitLab, Jenkins, GitHub actions): one testsuite per
mutation test suite, one testcase per scored mutant; a surviving mutant is a failure (the suite
did not detect it), an undecided one is skipped. Written as a string; callers place it."""

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
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("skipped", str(skipped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
