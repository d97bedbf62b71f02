"""The qmltest command line (installed as the package `qmltest_cli`)."""
