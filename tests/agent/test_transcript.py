"""The transcript: typed messages, converted to the provider's format once, when first sent."""

from crew.agent.transcript import AssistantMessage, SystemMessage, ToolMessage, Transcript, UserMessage
from crew.models import LLMResponse
from crew.tools.messages import ToolCall


def test_typed_messages_become_openai_dicts_when_sent():
    transcript = Transcript(SystemMessage("be brief"), UserMessage("add 1 and 2"))
    call = ToolCall(name="add", args={"a": 1, "b": 2}, id="call_1")
    transcript.append(AssistantMessage.of(LLMResponse(tool_calls=[call])))
    transcript.append(ToolMessage("call_1", "3"))

    first = transcript.wire()
    assert first == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "add 1 and 2"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "3"},
    ]
    first.append({"role": "user", "content": "a model may keep and change what it was sent"})
    transcript.append(AssistantMessage("3"))
    second = transcript.wire()
    assert len(second) == 5 and second[-1] == {"role": "assistant", "content": "3"}
    assert second[0] is first[0]  # converted once, not per call
    assert isinstance(transcript.messages[2], AssistantMessage) and transcript.messages[2].tool_calls == (call,)
