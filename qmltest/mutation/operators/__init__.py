"""Mutation operators: QuanForge's nine (quanforge), the QML seven (qml), the classic gate and
measurement operators (classic), one registry; the edits, sites, canonical forms and mutant ids they
share."""
