"""The vendored mutation-testing-elements viewer script (a package only so the wheel carries it)."""
