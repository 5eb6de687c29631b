"""Shared helper of the walkthrough's section files."""


def section(title):
    print()
    print("=" * 72)
    print(title)
    print("=" * 72)
