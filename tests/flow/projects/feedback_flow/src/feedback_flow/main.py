#!/usr/bin/env python
from crewai.flow import HumanFeedbackResult, human_feedback
from crewai.flow.flow import Flow, listen, start
from pydantic import BaseModel

from .crews.note_crew.note_crew import NoteCrew


class NoteState(BaseModel):
    topic: str = "oolong"
    written: int = 0


class FeedbackFlow(Flow[NoteState]):
    @start()
    @human_feedback(message="Publish this note?", emit=["approved", "rejected"], default_outcome="rejected")
    def write_note(self):
        self.state.written += 1
        with open("written.txt", "a", encoding="utf-8") as file:  # the body's side effect: once per run of it
            file.write("written\n")
        return NoteCrew().crew().kickoff(inputs={"topic": self.state.topic}).raw

    @listen("approved")
    def publish(self, result: HumanFeedbackResult):
        return f"published after {self.state.written} writing ({result.feedback})"

    @listen("rejected")
    def shelve(self, result: HumanFeedbackResult):
        return f"shelved: {result.feedback}"


def kickoff():
    FeedbackFlow().kickoff()


if __name__ == "__main__":
    kickoff()
