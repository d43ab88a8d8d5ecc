"""How many tests skipped and why, from the JUnit XML files of `make test`'s pytest runs: printed at
its end, where the two runs' own summaries have scrolled away. A skip hides a check, so each reason
is said once with its count."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter


def main(paths: list[str]) -> None:
    reasons: Counter[str] = Counter()
    modules: dict[str, set[str]] = {}
    for path in paths:
        for case in ET.parse(path).iter("testcase"):
            skipped = case.find("skipped")
            if skipped is not None:
                reason = skipped.get("message") or "no reason given"
                reasons[reason] += 1
                modules.setdefault(reason, set()).add(case.get("classname", "?"))
    total = sum(reasons.values())
    if not total:
        print("make test: no test skipped")
        return
    print(f"make test: {total} test{'s' if total > 1 else ''} skipped:")
    for reason, n in reasons.most_common():
        print(f"  {n} × {reason}  [{', '.join(sorted(modules[reason]))}]")


if __name__ == "__main__":
    main(sys.argv[1:])
