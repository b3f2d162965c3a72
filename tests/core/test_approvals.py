import json

from uibridge import ToolCallPart
from uibridge.core.approvals import ApprovalSigner


def _through_javascript_json(call: ToolCallPart) -> ToolCallPart:
    # What JSON.parse + JSON.stringify does to the numbers: a whole float comes back as an integer.
    text = json.dumps(call.args_as_dict()).replace('1.0', '1')
    return call.model_copy(update={'args': json.loads(text)})


def test_an_approval_id_verifies_for_the_call_it_was_minted_for() -> None:
    signer = ApprovalSigner('secret')
    call = ToolCallPart(tool_name='delete_file', args={'path': 'a.txt'}, tool_call_id='c1')
    approval_id = signer.approval_id(call)
    assert approval_id.startswith('apr_')
    assert signer.verify(approval_id, call)


def test_an_edited_call_or_another_secret_does_not_verify() -> None:
    signer = ApprovalSigner('secret')
    call = ToolCallPart(tool_name='delete_file', args={'path': 'a.txt'}, tool_call_id='c1')
    approval_id = signer.approval_id(call)
    assert not signer.verify(approval_id, call.model_copy(update={'args': {'path': '/etc/passwd'}}))
    assert not signer.verify(approval_id, call.model_copy(update={'tool_name': 'format_disk'}))
    assert not signer.verify(approval_id, call.model_copy(update={'tool_call_id': 'c2'}))
    assert not ApprovalSigner('other').verify(approval_id, call)
    assert not ApprovalSigner().verify(approval_id, call)


def test_args_as_a_json_string_or_a_dict_sign_the_same() -> None:
    signer = ApprovalSigner(b'k')
    as_dict = ToolCallPart(tool_name='t', args={'b': 2, 'a': [1, {'c': None}]}, tool_call_id='c')
    as_text = as_dict.model_copy(update={'args': '{"a": [1, {"c": null}], "b": 2}'})
    assert signer.approval_id(as_dict) == signer.approval_id(as_text)


def test_a_whole_number_float_survives_a_browser_round_trip() -> None:
    signer = ApprovalSigner('secret')
    call = ToolCallPart(tool_name='transfer', args={'amount': 1.0, 'nested': [{'x': 1.0}], 'rate': 0.5})
    returned = _through_javascript_json(call)
    assert returned.args == {'amount': 1, 'nested': [{'x': 1}], 'rate': 0.5}
    assert signer.verify(signer.approval_id(call), returned)
