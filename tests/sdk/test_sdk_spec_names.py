"""`SoperatorSpec("demo")` and `WorkerPoolSpec("cpu")`: the name may come first, positionally,
as in npa's SDK, and is checked as strictly as the keyword."""

from __future__ import annotations

import pydantic
import pytest

from npa.sdk import soperator


def test_the_name_may_be_given_positionally() -> None:
    spec = soperator.SoperatorSpec(
        "demo", region="eu-north1", workers=[soperator.WorkerPoolSpec("cpu", size=2)]
    )
    assert spec.name == "demo" and spec.workers[0].name == "cpu"
    assert spec == soperator.SoperatorSpec(
        name="demo", region="eu-north1", workers=[soperator.WorkerPoolSpec(name="cpu", size=2)]
    )
    assert soperator.validate(spec).ok


def test_a_positional_name_is_still_strict() -> None:
    with pytest.raises(pydantic.ValidationError, match="valid string"):
        soperator.SoperatorSpec(5)  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError, match="size"):
        soperator.WorkerPoolSpec("cpu", size="2")  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError, match="missing"):
        soperator.SoperatorSpec()
    with pytest.raises(TypeError, match=r"multiple values for argument .name."):
        soperator.SoperatorSpec("a", name="b")
    with pytest.raises(TypeError, match="at most 12 positional"):
        soperator.WorkerPoolSpec(*(["x"] * 13))  # type: ignore[misc]
