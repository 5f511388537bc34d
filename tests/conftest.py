"""Test-session set-up shared by every test file."""

from __future__ import annotations


def pytest_collection_modifyitems(items):
    # The notebooks are the longest tests by far (one takes ~2 minutes): start them first (in their file's
    # order, longest first), so that the other tests fill the cores around them instead of waiting at the end.
    items.sort(key=lambda item: item.path.name != "test_notebooks.py")
