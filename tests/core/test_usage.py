"""Usage adds up count by count, and per provider and model (what AG-UI's RUN_FINISHED.usage lists)."""

from __future__ import annotations

from uibridge.core.usage import ModelUsage, Usage, add_usage, usage_by_model


def test_add_usage_adds_every_count_and_every_detail() -> None:
    left = Usage(input_tokens=3, output_tokens=1, cache_read_tokens=2, details={'a': 1})
    right = Usage(input_tokens=4, output_reasoning_tokens=5, details={'a': 2, 'b': 3})
    assert add_usage(left, right) == Usage(
        input_tokens=7, output_tokens=1, cache_read_tokens=2, output_reasoning_tokens=5, details={'a': 3, 'b': 3}
    )
    assert add_usage(left, right).total_tokens == 8


def test_usage_by_model_groups_in_first_seen_order_and_skips_unknown_usage() -> None:
    one, two = Usage(input_tokens=1), Usage(output_tokens=2)
    entries = [('openai', 'gpt', one), ('anthropic', 'claude', two), ('openai', 'gpt', two), (None, None, None)]
    assert usage_by_model(entries) == [
        ModelUsage(provider_name='openai', model_name='gpt', usage=add_usage(one, two)),
        ModelUsage(provider_name='anthropic', model_name='claude', usage=two),
    ]


def test_a_provider_count_without_a_field_is_kept() -> None:
    usage = Usage.model_validate({'input_tokens': 1, 'cache_write_1h_tokens': 4})
    assert usage.model_dump()['cache_write_1h_tokens'] == 4
    assert Usage().is_empty()
    assert not usage.is_empty()
