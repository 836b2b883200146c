"""The contract check on a small hand-written contract: every HCL type, every kind of problem,
and the exact text each one prints (contract.py).

The real contracts are exercised by the render tests; this one is small enough to see at a
glance which value breaks which rule.
"""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.recipe.contract import Contract, ContractError, check, load_contract, require

COMMIT = "0123456789abcdef0123456789abcdef01234567"
IGNORED = "(Terraform would ignore it)"
DROPPED = "is not an attribute of the declared type (Terraform would drop it silently)"


def obj(**attrs: Any) -> dict[str, Any]:
    """An object type; `name=(type, optional[, default])`."""
    out: dict[str, Any] = {}
    for name, spec in attrs.items():
        tree, optional, *default = spec
        out[name] = {"type": tree, "optional": optional}
        if default:
            out[name]["default"] = default[0]
    return {"object": out}


def var(tree: Any, *, required: bool = False, nullable: bool = True, **extra: Any) -> dict:
    return {"type": tree, "required": required, "nullable": nullable, **extra}


NODE = obj(
    name=("string", False),
    label=("string", True),
    size=("number", True, 1),
    disk=(
        obj(kind=("string", True, "ssd"), gib=("number", False), zone=("string", True)),
        True,
        None,
    ),
)
CONTRACT = Contract(
    commit=COMMIT,
    soperator_version="9.9.9",
    required_version=">= 1.8",
    variables={
        "name": var("string", required=True, nullable=False, prefix="np-"),
        "count": var("number", default=3),
        "flag": var("bool", nullable=False),
        "scope": var("string", one_of=["essential", "all"]),
        "tags": var({"list": "string"}),
        "ids": var({"set": "string"}),
        "labels": var({"map": "number"}),
        "pair": var({"tuple": ["string", "number"]}),
        "anything": var("any"),
        "node": var(NODE),
        "nodes": var({"list": NODE}),
        "by_name": var({"map": NODE}),
        "pool": var({"set": NODE}),
        "opts": var(obj(x=("string", True)), default={}),
        "region": var("string", required=True),
        "spool": var(obj(spec=(obj(gib=("number", False)), True)), default=None),
        "accounting": var("bool", default=False),
        "login": var({"list": obj(ip=("string", True))}, default=[]),
    },
    null_dereferences=[
        {"path": "spool.spec"},
        {"path": "node.disk.kind"},
        {"path": "by_name.k.label"},
        {"path": "opts.x", "when": [[{"path": "count", "equals": 9}]]},
        {"path": "node.disk.zone", "when": [[{"path": "count", "equals": 5}]]},
        {
            "path": "spool",
            "when": [
                [{"path": "accounting", "equals": True}],
                [{"path": "flag", "equals": False}, {"path": "count", "equals": 7}],
            ],
        },
    ],
)
GOOD: dict[str, Any] = {
    "name": "np-a",
    "flag": True,
    "spool": {"spec": {"gib": 1}},
}


def problems(tfvars: dict[str, Any], **kw: Any) -> list[str]:
    return [str(p) for p in check(tfvars, CONTRACT, **kw)]


def test_the_good_values_pass() -> None:
    assert problems(GOOD, from_env=["region"]) == []


CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "undeclared": (
        {"nmae": "x"},
        ["nmae: is not declared by this recipe (Terraform would ignore it)"],
    ),
    "null-not-nullable": (
        {"name": None, "flag": None},
        [
            "name: is null, but the variable is not nullable",
            "flag: is null, but the variable is not nullable",
        ],
    ),
    "null-nullable": ({"scope": None, "tags": None}, []),
    "prefix": ({"name": "a"}, ["name: must start with 'np-'"]),
    "one-of": ({"scope": "most"}, ["scope: 'most' is not one of essential, all"]),
    "one-of-allowed": ({"scope": "all"}, []),
    "string": (
        {"scope": 1.3},
        ["scope: must be a string, got number", "scope: 1.3 is not one of essential, all"],
    ),
    "number": ({"count": "3"}, ["count: must be a number, got string"]),
    "number-not-bool": ({"count": True}, ["count: must be a number, got bool"]),
    "number-float": ({"count": 2.5}, []),
    "bool": ({"flag": 1}, ["flag: must be a bool, got number"]),
    "list": ({"tags": "a"}, ["tags: must be a list, got string"]),
    "list-items": (
        {"tags": ["a", 1, None, {}]},
        ["tags[1]: must be a string, got number", "tags[3]: must be a string, got object"],
    ),
    "set": ({"ids": {"a": 1}}, ["ids: must be a list, got object"]),
    "set-items": ({"ids": [True]}, ["ids[0]: must be a string, got bool"]),
    "map": ({"labels": [1]}, ["labels: must be a map, got list"]),
    "map-items": (
        {"labels": {"a": 1, "b": None, "c": "x"}},
        ["labels['c']: must be a number, got string"],
    ),
    "tuple-length": ({"pair": ["a"]}, ["pair: must be a tuple of 2"]),
    "tuple-not-list": ({"pair": "ab"}, ["pair: must be a tuple of 2"]),
    "tuple-items": ({"pair": [1, None]}, ["pair[0]: must be a string, got number"]),
    "tuple-second": ({"pair": ["a", "b"]}, ["pair[1]: must be a number, got string"]),
    "any": ({"anything": {"x": [1, "y"]}}, []),
    "object": ({"node": "n"}, ["node: must be an object, got string"]),
    "object-extra": (
        {"node": {"name": "n", "colour": "red"}},
        [f"node.colour: {DROPPED}"],
    ),
    "object-missing-required": (
        {"node": {"size": 2}, "nodes": [{"name": "a"}, {}]},
        [
            "node.name: is a required attribute but missing",
            "nodes[1].name: is a required attribute but missing",
        ],
    ),
    "object-optional-left-out": ({"node": {"name": "a"}}, []),
    "object-nested": (
        {"node": {"name": "a", "disk": {"gib": "x", "kind": None}}},
        [
            "node.disk.gib: must be a number, got string",
            "node.disk.kind: is null, but main.tf reads through it without a null guard",
        ],
    ),
    "object-after-missing": (
        {"node": {"size": "big"}},
        [
            "node.name: is a required attribute but missing",
            "node.size: must be a number, got string",
        ],
    ),
    "list-of-objects": ({"nodes": [{"name": 1}]}, ["nodes[0].name: must be a string, got number"]),
    "map-of-objects": (
        {"by_name": {"j": {"name": "a", "size": None, "bad": 1}}},
        [f"by_name['j'].bad: {DROPPED}"],
    ),
    "null-deref-always": (
        {"spool": {"spec": None}},
        ["spool.spec: is null, but main.tf reads through it without a null guard"],
    ),
    "null-deref-attribute-left-out": (
        {"spool": {}},
        ["spool.spec: is null, but main.tf reads through it without a null guard"],
    ),
    "null-deref-parent-null": ({"spool": None}, []),
    "null-deref-when": (
        {"spool": None, "accounting": True},
        ["spool: is null, but main.tf reads through it when accounting = true"],
    ),
    "null-deref-when-both-flags": (
        {"spool": None, "flag": False, "count": 7},
        ["spool: is null, but main.tf reads through it when flag = false and count = 7"],
    ),
    "null-deref-when-one-flag-off": ({"spool": None, "flag": False, "count": 8}, []),
    "null-deref-through-a-map": (
        {"by_name": {"k": {"name": "a"}}},
        ["by_name.k.label: is null, but main.tf reads through it without a null guard"],
    ),
    "null-deref-through-a-map-set": ({"by_name": {"k": {"name": "a", "label": "l"}}}, []),
    "null-deref-in-a-default": (
        {"count": 9},
        ["opts.x: is null, but main.tf reads through it when count = 9"],
    ),
    "null-deref-nested-default": (
        {"node": {"name": "a", "disk": {"gib": 1}}, "count": 5},
        ["node.disk.zone: is null, but main.tf reads through it when count = 5"],
    ),
    "null-deref-default-object": (
        {"node": {"name": "a", "disk": {"gib": 1}}},
        [],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_problem_word_for_word(case: str) -> None:
    changes, expected = CASES[case]
    assert problems({**GOOD, **changes}, from_env=["region"]) == [
        f"recipe 01234567: {line}" for line in expected
    ]


def test_required_variables_come_from_the_file_or_the_environment() -> None:
    assert problems(GOOD) == [
        "recipe 01234567: region: is required but neither rendered nor set from the environment"
    ]
    assert problems({**GOOD, "region": "eu-north1"}) == []
    without_name = {k: v for k, v in GOOD.items() if k != "name"}
    assert problems(without_name, from_env=["region"]) == [
        "recipe 01234567: name: is required but neither rendered nor set from the environment"
    ]


def test_a_problem_names_commit_variable_and_path() -> None:
    (problem,) = check({**GOOD, "nodes": [{"name": 1}]}, CONTRACT, from_env=["region"])
    assert (problem.commit, problem.variable, problem.path) == (COMMIT, "nodes", "[0].name")
    assert problem.message == "must be a string, got number"


def test_a_variable_left_out_counts_with_its_default() -> None:
    without_spool = {k: v for k, v in GOOD.items() if k != "spool"}
    assert problems({**without_spool, "accounting": True}, from_env=["region"]) == [
        "recipe 01234567: spool: is null, but main.tf reads through it when accounting = true"
    ]
    assert problems(without_spool, from_env=["region"]) == []


def test_a_null_dereference_names_variable_and_path() -> None:
    (problem,) = check({**GOOD, "spool": {"spec": None}}, CONTRACT, from_env=["region"])
    assert (problem.variable, problem.path) == ("spool", ".spec")
    (problem,) = check({**GOOD, "spool": None, "accounting": True}, CONTRACT, from_env=["region"])
    assert (problem.variable, problem.path) == ("spool", "")


def test_contract_look_ups() -> None:
    assert CONTRACT.declares("name") and not CONTRACT.declares("nope")
    assert CONTRACT.type_of("tags") == {"list": "string"}
    assert list(CONTRACT.object_attrs("node")) == ["name", "label", "size", "disk"]
    assert list(CONTRACT.object_attrs("nodes")) == ["name", "label", "size", "disk"]  # lists
    assert list(CONTRACT.object_attrs("pool")) == ["name", "label", "size", "disk"]  # sets
    assert CONTRACT.object_attrs("node", "name", "deeper") == {}
    assert CONTRACT.object_attrs("pair") == {} and CONTRACT.object_attrs("pair", "x") == {}
    assert list(CONTRACT.object_attrs("by_name", "disk")) == ["kind", "gib", "zone"]  # maps
    assert CONTRACT.object_attrs("node", "name") == {}  # not an object
    assert CONTRACT.object_attrs("node", "nope") == {}
    assert CONTRACT.object_attrs("nope") == {}
    assert CONTRACT.object_attrs("name") == {}
    assert CONTRACT.has_attr("nodes", "disk", "kind") and not CONTRACT.has_attr("node", "x")
    assert CONTRACT.one_of("scope") == ["essential", "all"]
    assert CONTRACT.one_of("tags") is None and CONTRACT.one_of("nope") is None
    assert CONTRACT.default("count") == 3 and CONTRACT.default("nope") is None
    assert CONTRACT.default("tags") is None


def test_contract_error_lists_twenty_problems_then_counts_the_rest() -> None:
    broken = {**GOOD, **{f"x{i:02}": 1 for i in range(22)}}
    with pytest.raises(ContractError) as info:
        require(broken, CONTRACT, from_env=["region"])
    err = info.value
    assert len(err.problems) == 22
    lines = str(err).splitlines()
    assert lines[0] == "the rendered variables do not meet the recipe contract:"
    assert (
        lines[1]
        == "  - recipe 01234567: x00: is not declared by this recipe (Terraform would ignore it)"
    )
    assert len(lines) == 22 and lines[20].startswith("  - recipe 01234567: x19: ")
    assert lines[21] == "  … and 2 more"
    assert err.hint == "please report this with the spec (IDs redacted)"
    exactly = {**GOOD, **{f"x{i:02}": 1 for i in range(20)}}
    with pytest.raises(ContractError) as info:
        require(exactly, CONTRACT, from_env=["region"])
    lines = str(info.value).splitlines()
    assert len(lines) == 21
    assert lines[-1] == f"  - recipe 01234567: x19: is not declared by this recipe {IGNORED}"
    one_more = {**GOOD, **{f"x{i:02}": 1 for i in range(21)}}
    with pytest.raises(ContractError) as info:
        require(one_more, CONTRACT, from_env=["region"])
    assert str(info.value).splitlines()[-1] == "  … and 1 more"
    require(GOOD, CONTRACT, from_env=["region"])  # no problem: no error


def test_packaged_contracts_load_with_their_commit() -> None:
    contract = load_contract("9a187732a69e500115f78a088dc2ceb3981540e3")
    assert contract.commit == "9a187732a69e500115f78a088dc2ceb3981540e3"
    assert contract.soperator_version == "4.1.12"
    with pytest.raises(KeyError):
        load_contract("0" * 40)
