"""The index's module names and the file of each module, held in memory or in a table."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import errscan
from errscan.analyzer import index as index_stage
from errscan.analyzer.files import Listing
from errscan.analyzer.index import HeldModules, Index, ModuleTable, _is_package_init
from errscan.models import FileSummary, Import

_PATHS = st.lists(
    st.sampled_from(["a", "b", "src", "__init__", "m", "n"]), min_size=1, max_size=4
).flatmap(lambda parts: st.sampled_from([".py", ".pyi"]).map(lambda ext: "/".join(parts) + ext))


def _module_names(paths: list[str]) -> dict[str, str]:
    """The rule, written out: climb from a file's folder while the folder is a package."""
    packages = {p.rsplit("/", 1)[0] for p in paths if _is_package_init(p)}
    names = {}
    for path in paths:
        parts = path.rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        folders = path.split("/")[:-1]
        top = len(folders)
        while top > 0 and "/".join(folders[:top]) in packages:
            top -= 1
        names[path] = ".".join(parts[top:]) or (parts[-1] if parts else "__init__")
    return names


@settings(max_examples=100, deadline=None)
@given(st.sets(_PATHS, max_size=12))
def test_module_of_and_file_of_follow_the_rule(paths: set[str]) -> None:
    names = _module_names(sorted(paths))
    file_of: dict[str, str] = {}
    for path in sorted(paths, key=lambda p: (p.endswith(".pyi"), p)):  # a module over its stub
        file_of.setdefault(names[path], path)
    listing = Listing((path, f"{i:040x}", 1) for i, path in enumerate(paths))
    try:
        held = ModuleTable(listing)  # a copy in memory too (up to index.HELD_MODULES files)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(index_stage, "HELD_MODULES", -1)
            listing.db.execute("DROP TABLE module")
            tabled = ModuleTable(listing)  # its table alone
        assert held._held is not None and tabled._held is None
        assert (
            held.rows()
            == tabled.rows()
            == [(path, names[path], path.endswith(".pyi")) for path in sorted(paths)]
        )
        for modules in (HeldModules(paths), held, tabled):
            index = Index(modules, lambda _path: None)
            for path in paths:
                assert index.module_of(path) == names[path]
            assert index.module_of("nowhere.py") is None
            for module in {*names.values(), "nowhere", "a.nowhere"}:
                assert index.file_of(module) == file_of.get(module)
    finally:
        listing.close()


def test_a_top_level_init_file_is_scanned() -> None:
    """It once stopped the scan: a package with no folder name has no module path."""
    code = "class Bad(ValueError):\n    pass\n\ndef f():\n    raise Bad('no')\n"
    (record,) = errscan.extract_source(code, "__init__.py")
    assert record.exception == "Bad"
    assert record.exception_qualname == "__init__.Bad"


def _index_of(files: dict[str, str]) -> Index:
    from errscan.analyzer.scan import scan_file

    return Index.of({path: scan_file(path, code, 0).summary for path, code in files.items()})


def test_looked_up_reads_a_class_dict_of_the_method_class_or_its_base_then_subclasses() -> None:
    index = _index_of(
        {
            "pkg/__init__.py": "",
            "pkg/base.py": (
                "class Field:\n"
                "    default_error_messages = {'invalid': 'Not valid.', 'null': 'No null.'}\n"
            ),
            "pkg/fields.py": (
                "from .base import Field\n"
                "class Number(Field):\n"
                "    def fail(self, key):\n"
                "        return ValueError(self.error_messages[key])\n"
                "class Integer(Number):\n"
                "    default_error_messages = {'invalid': 'Not an integer.'}\n"
                "class Other(Field):\n"
                "    default_error_messages = {'invalid': 'Not other.'}\n"
            ),
        }
    )
    found = index.looked_up("pkg/fields.py", "Number.fail", "error_messages", "invalid")
    # the base's across files, then the same file's subclass, never an unrelated class's
    assert found == (["'Not valid.'", "'Not an integer.'"], False)
    assert index.looked_up("pkg/fields.py", "Number.fail", "error_messages", "null") == (
        ["'No null.'"],
        False,
    )
    assert index.looked_up("pkg/fields.py", "Number.fail", "error_messages", "gone") == ([], False)
    assert index.looked_up("pkg/fields.py", "fail", "error_messages", "invalid") == ([], False)


def test_looked_up_messages_a_caller_may_set_are_configurable() -> None:
    base = (
        "class Field:\n"
        "    default_error_messages = {'invalid': 'Not valid.'}\n"
        "    def __init__(self, *, error_messages=None):\n"
        "        messages = {}\n"
        "        for cls in reversed(type(self).__mro__):\n"
        "            messages.update(getattr(cls, 'default_error_messages', {}))\n"
        "        messages.update(error_messages or {})\n"
        "        self.error_messages = messages\n"
        "    def fail(self, key):\n"
        "        return ValueError(self.error_messages[key])\n"
        "class Number(Field):\n"
        "    def check(self):\n"
        "        raise self.fail('invalid')\n"
    )
    index = _index_of({"fields.py": base})
    assert index.looked_up("fields.py", "Field.fail", "error_messages", "invalid") == (
        ["'Not valid.'"],
        True,
    )
    # the same merge without the caller's part is the class's alone
    fixed = base.replace("        messages.update(error_messages or {})\n", "")
    assert _index_of({"fields.py": fixed}).looked_up(
        "fields.py", "Field.fail", "error_messages", "invalid"
    ) == (["'Not valid.'"], False)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(min_value=0, max_value=5), max_size=3, unique=True),
        min_size=1,
        max_size=6,
    )
)
def test_the_resolution_order_is_pythons(bases_of: list[list[int]]) -> None:
    # classes K0..Kn, each of earlier ones only (so there is no cycle), as Python makes them
    from errscan.analyzer.index import _c3

    lines: dict[str, list[str]] = {}
    made: dict[str, type] = {}
    for i, bases in enumerate(bases_of):
        names = [f"K{b}" for b in bases if b < i]
        found = _c3([*(lines[n] for n in names), names])
        try:
            made[f"K{i}"] = type(f"K{i}", tuple(made[n] for n in names) or (object,), {})
        except TypeError:  # Python cannot order them either
            assert found is None
            return
        assert found is not None
        lines[f"K{i}"] = [f"K{i}", *found]
        assert lines[f"K{i}"] == [c.__name__ for c in made[f"K{i}"].__mro__[:-1]]


_AUTH_ERRORS = """
class GoogleAuthError(Exception):
    pass


class ReauthFailError(GoogleAuthError):
    def __init__(self, message=None):
        super().__init__("Reauthentication failed. {0}".format(message))
"""
_REAUTH = """
from google.auth import exceptions


def refresh(token):
    if token is None:
        raise exceptions.ReauthFailError("Failed to obtain rapt token.")
"""


def test_a_folder_the_code_imports_as_a_namespace_package_names_its_modules(
    tmp_path: Path,
) -> None:
    from tests.support import commit_all, git, write

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for path, text in {
        "src/google/auth/__init__.py": "",
        "src/google/auth/exceptions.py": _AUTH_ERRORS,
        "src/google/oauth2/__init__.py": "",
        "src/google/oauth2/reauth.py": _REAUTH,
    }.items():
        write(repo, path, text)
    commit_all(repo, "namespace")
    kept = errscan.extract(str(repo)).records
    (record,) = [r for r in kept if r.file.endswith("reauth.py")]
    assert record.exception_qualname == "google.auth.exceptions.ReauthFailError"
    assert record.message == "Reauthentication failed. Failed to obtain rapt token."
    # no code imports google.* any more: a rescan (kept state) is the fresh scan
    write(repo, "src/google/oauth2/reauth.py", _REAUTH.replace("from google.auth", "from auth"))
    commit_all(repo, "no namespace")
    again = errscan.extract(str(repo)).records
    fresh = errscan.extract(str(repo), use_cache=False).records
    assert again == fresh
    (record,) = [r for r in again if r.file.endswith("reauth.py")]
    assert record.exception_qualname == "auth.exceptions.ReauthFailError"


def test_namespace_candidates_are_folders_without_init_holding_a_package() -> None:
    from errscan.analyzer.index import namespace_candidates, namespaces

    paths = ["google/auth/__init__.py", "google/auth/x.py", "google/cloud/__init__.py",
             "pkg/__init__.py", "pkg/sub/__init__.py", "src/a-b/c/__init__.py"]  # fmt: skip
    listing = Listing((path, f"{i:040x}", 1) for i, path in enumerate(paths))
    found = namespace_candidates(listing)
    assert found == [("google", ["auth", "cloud"])]  # pkg has an __init__.py; a-b is no name
    imports = {"google/auth/x.py": [Import("c", 0, "google.cloud", "c")]}
    under = lambda folder: [p for p in paths if p.startswith(f"{folder}/")]  # noqa: E731
    assert namespaces(found, under, lambda path: imports.get(path, [])) == ["google"]
    assert namespaces(found, under, lambda path: []) == []


def test_a_star_import_of_a_repository_module_binds_what_it_defines() -> None:
    """pyparsing's core.py raises ParseException of `from .exceptions import *`: the
    last star import binding a name wins, a private name is never bound so, and one
    from outside the repository binds nothing errscan can name."""
    index = _index_of({
        "pkg/__init__.py": "",
        "pkg/exceptions.py": "class ParseException(Exception):\n    pass\n"
                             "class _Private(Exception):\n    pass\n"
                             "class Shadowed(Exception):\n    pass\n",
        "pkg/other.py": "class Shadowed(ValueError):\n    pass\n",
        "pkg/core.py": "from os.path import *\nfrom .exceptions import *\nfrom .other import *\n",
    })  # fmt: skip
    assert index.resolve("pkg/core.py", "ParseException") == "pkg.exceptions.ParseException"
    assert index.resolve("pkg/core.py", "Shadowed") == "pkg.other.Shadowed"
    assert index.resolve("pkg/core.py", "_Private") is None
    assert index.resolve("pkg/core.py", "Missing") is None
    assert index.resolve("pkg/core.py", "KeyError") == "builtins.KeyError"


def _counted_index(files: dict[str, str]) -> tuple[Index, list[str]]:
    """An index over `files` that notes each summary it loads."""
    from errscan.analyzer.scan import scan_file

    summaries = {path: scan_file(path, code, 0).summary for path, code in files.items()}
    loads: list[str] = []

    def load(path: str) -> FileSummary | None:
        loads.append(path)
        return summaries.get(path)

    index = Index(HeldModules(summaries), load)
    for path, summary in summaries.items():
        assert summary is not None
        index.register(path, [c.qualname for c in summary.classes], [])
    return index, loads


def test_a_name_re_exported_through_many_star_imports_is_walked_to_once() -> None:
    """networkx: `networkx/__init__.py` star-imports some 150 modules, and each file
    raises `nx.NetworkXError`. Each file's answer, and what it read, is its own; the walk
    through the star imports is made once, not once per file (past the 32 summaries
    the index keeps decoded, every summary was loaded again for each file)."""
    stars = index_stage._FACTS_CACHED + 20  # more than are kept decoded
    files = {f"pkg/m{i}.py": f"def f{i}():\n    pass\n" for i in range(stars)}
    files["pkg/exception.py"] = "class PkgError(Exception):\n    pass\n"
    # the exception's module first: the last star import binds first, so every other
    # module is walked before it
    files["pkg/__init__.py"] = "from pkg.exception import *\n" + "".join(
        f"from pkg.m{i} import *\n" for i in range(stars)
    )
    users = 20
    for i in range(users):
        files[f"pkg/use{i}.py"] = "import pkg as nx\n"
    index, loads = _counted_index(files)
    for i in range(users):
        with index.reads() as read:
            assert index.resolve(f"pkg/use{i}.py", "nx.PkgError") == "pkg.exception.PkgError"
        assert {"p:pkg/__init__.py", "p:pkg/m0.py", f"p:pkg/use{i}.py"} <= read
        assert "c:pkg.exception.PkgError" in read
    # each summary loaded once (the exception's module is found by its class's name)
    assert sorted(loads) == sorted(
        [f"pkg/m{i}.py" for i in range(stars)]
        + [f"pkg/use{i}.py" for i in range(users)]
        + ["pkg/__init__.py"]
    )


def test_a_remembered_answer_below_the_top_never_outlasts_the_hop_limit() -> None:
    """A chain of re-exports as long as the hop limit allows: asked for from its top it
    resolves; asked for from two modules further up, the same walk passes the limit and
    gives nothing, whichever of the two was asked first."""
    depth = index_stage._MAX_HOPS
    files = {"pkg/__init__.py": "", f"pkg/r{depth}.py": "class Deep(Exception):\n    pass\n"}
    for i in range(depth):
        files[f"pkg/r{i}.py"] = f"from pkg.r{i + 1} import *\n"
    files["pkg/up1.py"] = "from pkg.r0 import *\n"
    files["pkg/up2.py"] = "from pkg.up1 import *\n"
    answers = []
    for order in (["pkg/r0.py", "pkg/up2.py"], ["pkg/up2.py", "pkg/r0.py"]):
        index, _ = _counted_index(files)
        answers.append({path: index.resolve(path, "Deep") for path in order})
        assert index.resolve("pkg/up1.py", "Deep") == answers[-1]["pkg/up2.py"]
    assert answers[0] == answers[1]
    assert answers[0]["pkg/r0.py"] == f"pkg.r{depth}.Deep"
    assert answers[0]["pkg/up2.py"] is None  # past the limit, as a fresh index says


# networkx's layout: the package binds its exception by one star import, then again by
# another, one of whose modules imports it back from the package
_CYCLE = {
    "pkg/__init__.py": "from pkg.exception import *\nfrom pkg.algorithms import *\n",
    "pkg/exception.py": "class PkgError(Exception):\n    pass\n",
    "pkg/algorithms/__init__.py": "from pkg.algorithms.flow import *\n"
                                  "from pkg.algorithms.recip import *\n",
    "pkg/algorithms/flow.py": "def flow():\n    pass\n",
    "pkg/algorithms/recip.py": "from pkg import PkgError\n",
    "pkg/use.py": "import pkg as nx\n",
}  # fmt: skip
_ASKED = [
    ("pkg/use.py", "nx.PkgError"),
    ("pkg/algorithms/recip.py", "PkgError"),
    ("pkg/algorithms/__init__.py", "PkgError"),
    ("pkg/__init__.py", "PkgError"),
]


@pytest.mark.parametrize("first", range(len(_ASKED)))
def test_a_name_imported_back_from_the_package_is_the_class_it_binds(first: int) -> None:
    """networkx: 469 of its 1,115 records raise `nx.NetworkXError`, bound in
    `networkx/__init__.py` by `from networkx.exception import *` and again by `from
    networkx.algorithms import *`, whose `reciprocity.py` has `from networkx import
    NetworkXError`. That cycle is no binding of its own: every file's answer is the
    class, whichever is asked first (an answer worked out inside the cycle is not kept),
    where the walk went round it to the hop limit and gave `networkx.NetworkXError`."""
    index, _ = _counted_index(_CYCLE)
    order = _ASKED[first:] + _ASKED[:first]
    for path, dotted in order:
        assert index.resolve(path, dotted) == "pkg.exception.PkgError", (path, dotted)
    info = index.exception_info("pkg.exception.PkgError")
    assert info is not None and info.bases == ("Exception",)


def test_a_name_two_modules_import_from_each_other_is_as_written() -> None:
    """`from b import X` in a.py and `from a import X` in b.py: neither binds X, so each
    gives the name as its own import writes it, whichever is asked first."""
    files = {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import X\n",
             "pkg/b.py": "from pkg.a import X\n"}  # fmt: skip
    for order in (["pkg/a.py", "pkg/b.py"], ["pkg/b.py", "pkg/a.py"]):
        index, _ = _counted_index(files)
        answers = {path: index.resolve(path, "X") for path in order}
        assert answers == {"pkg/a.py": "pkg.b.X", "pkg/b.py": "pkg.a.X"}


def test_an_attribute_of_a_class_is_named_as_written() -> None:
    """Django's `raise DeserializationError.WithData(...)`: a classmethod of a class
    of the module. Looked up in the module again it comes back to itself: the name is
    the class's, with the attribute, as written."""
    index = _index_of({
        "pkg/__init__.py": "",
        "pkg/base.py": "class DeserializationError(Exception):\n"
                       "    @classmethod\n"
                       "    def WithData(cls, exc):\n"
                       "        return cls(str(exc))\n",
    })  # fmt: skip
    assert (
        index.resolve("pkg/base.py", "DeserializationError.WithData")
        == "pkg.base.DeserializationError.WithData"
    )


_CLASSMETHOD = {
    "pkg/__init__.py": "",
    "pkg/base.py": "class DeserializationError(Exception):\n"
                   "    @classmethod\n"
                   "    def WithData(cls, exc, model):\n"
                   "        return cls('%s: %s' % (exc, model))\n\n"
                   "    def again(self, exc):\n"
                   "        raise self.WithData(exc, 'm')\n\n"
                   "class Sub(DeserializationError):\n"
                   "    def go(self, exc):\n"
                   "        raise self.WithData(exc, 'm')\n\n"
                   "def make(cls, msg):\n"
                   "    return cls(msg)\n",
    "pkg/use.py": "from pkg.base import DeserializationError, Sub, make\n"
                  "from pkg import base\n",
}  # fmt: skip


@pytest.mark.parametrize(
    ("path", "ref", "function", "made"),
    [
        ("pkg/use.py", "DeserializationError.WithData", "f", "pkg.base.DeserializationError"),
        ("pkg/use.py", "base.DeserializationError.WithData", "f", "pkg.base.DeserializationError"),
        # the subclass's: `cls` is the class the method is called on, which inherits it
        ("pkg/use.py", "Sub.WithData", "f", "pkg.base.Sub"),
        (
            "pkg/base.py",
            "self.WithData",
            "DeserializationError.again",
            "pkg.base.DeserializationError",
        ),
        ("pkg/base.py", "self.WithData", "Sub.go", "pkg.base.Sub"),
        # a function handed a class makes what it is handed: no class errscan can name
        ("pkg/use.py", "make", "f", None),
    ],
)
def test_a_classmethod_returning_cls_makes_the_class_it_is_called_on(
    path: str, ref: str, function: str, made: str | None
) -> None:
    """Django's `raise DeserializationError.WithData(original_exc, label, pk, value)`, a
    classmethod returning `cls("%s: (%s:pk=%s) field_value was '%s'" % ...)`."""
    index = _index_of(_CLASSMETHOD)
    assert index.factory_class(path, ref, function) == made
    if made is not None:
        assert index.factory_call(path, ref, function) == (
            ("exc", "model"),
            ((None, "'%s: %s' % (exc, model)"),),
        )


def test_a_module_s_other_name_of_a_class_resolves_to_the_class() -> None:
    """urllib3's exceptions.py: `ConnectionError = ProtocolError`, imported by that name
    elsewhere, is ProtocolError, not the builtin ConnectionError."""
    index = _index_of({
        "pkg/__init__.py": "",
        "pkg/exceptions.py": "from . import base\n"
                             "class ProtocolError(Exception):\n    pass\n"
                             "ConnectionError = ProtocolError\n"
                             "Other = base.BaseError\n"
                             "Twice = ProtocolError\nTwice = KeyError\n",
        "pkg/base.py": "class BaseError(Exception):\n    pass\n",
        "pkg/h2.py": "from .exceptions import ConnectionError, Other, Twice\n",
    })  # fmt: skip
    assert index.resolve("pkg/h2.py", "ConnectionError") == "pkg.exceptions.ProtocolError"
    assert index.resolve("pkg/h2.py", "Other") == "pkg.base.BaseError"
    assert index.resolve("pkg/h2.py", "Twice") == "pkg.exceptions.Twice"  # bound twice: not read


# every way linking reads details a partial summary defers: a mixin's __init__ in a file
# of its own (exception_info), a form field's messages (looked_up), a factory of a
# class not named as an exception (factory_at)
_DEFERRED = {
    "pkg/__init__.py": "",
    "pkg/mixins.py": (
        "class Described:\n"
        "    def __init__(self, thing):\n"
        "        super().__init__(f'{thing} is not described')\n"
    ),
    "pkg/errors.py": (
        "from .mixins import Described\n"
        "class Undescribed(Described, ValueError):\n    pass\n"
        "class ValidationError(Exception):\n    pass\n"
    ),
    "pkg/forms.py": (
        "from .errors import ValidationError\n"
        "class Field:\n"
        "    default_error_messages = {'invalid': 'Enter a valid value.'}\n"
        "    def __init__(self, error_messages=None):\n"
        "        self.error_messages = dict(self.default_error_messages)\n"
        "        if error_messages:\n"
        "            self.error_messages.update(error_messages)\n"
        "    def make_error(self, key):\n"
        "        return ValidationError(self.error_messages[key])\n"
        "    def clean(self, value):\n"
        "        if not value:\n"
        "            raise self.make_error('invalid')\n"
        "class Number(Field):\n"
        "    default_error_messages = {'invalid': 'Enter a number.'}\n"
    ),
    "pkg/factories.py": (
        "from .errors import Undescribed\ndef gone(thing):\n    return Undescribed(thing)\n"
        "def again(thing):\n    return gone(thing)\n"  # a factory of a factory
    ),
    "pkg/use.py": (
        "from .errors import Undescribed\n"
        "from .factories import again, gone\n"
        "def f(x):\n    raise Undescribed(x)\n"
        "def g(y):\n    raise gone(y)\n"
        "def h(z):\n    raise again(z)\n"
    ),
}


def test_partial_summaries_link_as_whole_ones_completing_what_is_read() -> None:
    """An index over partial summaries asks `complete` for a file whose deferred details
    a resolution reads, and only then; the records are those whole summaries give."""
    from errscan.analyzer import link
    from errscan.analyzer.scan import scan_file

    results = {path: scan_file(path, code, 2, partial=True) for path, code in _DEFERRED.items()}
    whole = {path: scan_file(path, code, 2).summary for path, code in _DEFERRED.items()}
    assert {p for p, r in results.items() if r.summary.partial} == {
        "pkg/mixins.py",
        "pkg/forms.py",
        "pkg/factories.py",
        "pkg/use.py",
    }  # fmt: skip (use.py: f and g raise one class each, factories of a kind)
    completed: list[str] = []

    def complete(path: str) -> FileSummary:
        completed.append(path)
        return whole[path]

    partial = Index(HeldModules(_DEFERRED), {p: r.summary for p, r in results.items()}.get,
                    complete=complete)  # fmt: skip
    reference = Index.of(whole)
    for path, result in results.items():
        partial.register(path, [c.qualname for c in result.summary.classes],
                         [f for f, _ in result.summary.factories])  # fmt: skip

    def records(index: Index) -> list[object]:
        return [
            record.to_dict()
            for path, result in results.items()
            for record in link.link(result.sites, "", "", lambda _f, _l: None, index)
        ]

    linked = records(partial)
    assert linked == records(reference)
    assert sorted(completed) == ["pkg/factories.py", "pkg/forms.py", "pkg/mixins.py"]
    messages = {r["function"]: r["message"] for r in linked}  # type: ignore[index]
    assert messages == {
        "f": "{x} is not described",  # the mixin's __init__
        "g": "{y} is not described",  # and the factory's call of the class
        "h": None,  # a factory's factory: its class not followed, whole or partial
        "Field.clean": "Enter a valid value.",  # the class dict of the method's class
    }


def test_details_that_cannot_be_read_again_are_unknown_not_guessed() -> None:
    """A file that cannot be read whole now (the time limit) leaves each deferred class
    one whose __init__ errscan could not read: the message of a class on its line is
    unresolved, not the call's arguments nor a default."""
    from errscan.analyzer import link
    from errscan.analyzer.scan import scan_file

    results = {path: scan_file_partial(path, code) for path, code in _DEFERRED.items()}
    index = Index(HeldModules(_DEFERRED), results.get, complete=lambda _path: None)
    for path, found in results.items():
        index.register(path, [c.qualname for c in found.classes], [f for f, _ in found.factories])
    assert index.exception_info("pkg.errors.Undescribed").init_unread
    used = scan_file("pkg/use.py", _DEFERRED["pkg/use.py"], 2, partial=True)
    records = link.link(used.sites, "", "", lambda _f, _l: None, index)
    assert [(r.function, r.message, r.message_source) for r in records] == [
        ("f", None, "unresolved"), ("g", None, "unresolved"), ("h", None, "unresolved"),
    ]  # fmt: skip


def scan_file_partial(path: str, code: str) -> FileSummary:
    from errscan.analyzer.scan import scan_file

    return scan_file(path, code, 2, partial=True).summary
