"""The recall study's time hold-out and its variants written as Fusion fields."""

from __future__ import annotations

from types import SimpleNamespace

from benchmarks.recallstudy import rephrased, variant
from huichat.memory.fusion import Fusion


def test_when_questions_are_asked_four_other_ways_and_others_stay_as_they_are() -> None:
    asked = {rephrased("When did Caroline go to the support group?", turn) for turn in range(4)}
    assert asked == {
        "On which day did Caroline go to the support group?",
        "What date did Caroline go to the support group?",
        "Around when did Caroline go to the support group?",
        "How long ago did Caroline go to the support group?",
    }
    assert rephrased("When is Melanie's birthday?", 0) == "On what date is Melanie's birthday?"
    assert rephrased("Where was Tim in November?", 2) == "Where was Tim in November?"


def test_a_variant_written_as_fields_changes_those_fields_only() -> None:
    holder = SimpleNamespace(retriever=SimpleNamespace(fusion=Fusion()))  # a kernel, as far as a variant looks
    variant("hop_weight=0+speaker_share=0.15+pool=100")(holder)  # type: ignore[arg-type]
    fusion = holder.retriever.fusion
    assert (fusion.hop_weight, fusion.speaker_share, fusion.pool) == (0.0, 0.15, 100)
    assert fusion.vector_weight == Fusion().vector_weight


def test_a_tuple_field_is_written_with_slashes() -> None:
    holder = SimpleNamespace(retriever=SimpleNamespace(fusion=Fusion()))
    variant("cjk_weights=0.9/0.1+context=0.2/0.1/0.05")(holder)  # type: ignore[arg-type]
    assert holder.retriever.fusion.cjk_weights == (0.9, 0.1)
    assert holder.retriever.fusion.context == (0.2, 0.1, 0.05)
