"""The families' doctests, run under the one name the families have: ``spartition.families``.

``pytest --doctest-modules`` collects ``spartition/`` by path; the families'
folder ``dags/`` is no part of that tree (and refuses to be imported as
``dags``), so their examples run here, each module by its package name.
"""

import doctest
import importlib
import pkgutil

import pytest

import spartition.families

MODULES = sorted(info.name for info in pkgutil.walk_packages(spartition.families.__path__, "spartition.families."))


def test_every_family_module_is_listed():
    assert {"spartition.families.classic.dag", "spartition.families.attention.forward.dag", "spartition.families.attention.forward.standard",
            "spartition.families.approx_attention.claims"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"
