#!/usr/bin/env python
import asyncio
from typing import List

from crewai.flow.flow import Flow, and_, listen, router, start
from pydantic import BaseModel

from review_loop_flow.crews.draft_crew.draft_crew import DraftCrew

from .crews.review_crew.review_crew import ReviewCrew


class ReviewState(BaseModel):
    topic: str = "green tea"
    draft: str = ""
    rounds: int = 0
    notes: List[str] = []


class ReviewLoopFlow(Flow[ReviewState]):
    initial_state = ReviewState

    @start("revise")
    def write_draft(self):
        result = DraftCrew().crew().kickoff(inputs={"topic": self.state.topic, "round": self.state.rounds})
        self.state.draft = result.raw
        self.state.notes.append(f"draft {self.state.rounds}")

    @router(write_draft)
    def review(self):
        self.state.rounds += 1
        verdict = ReviewCrew().crew().kickoff(inputs={"draft": self.state.draft})
        self.state.notes.append(f"review {type(verdict['score']).__name__}")
        if self.state.rounds < 3:
            return "revise"
        return "approved"

    @listen("approved")
    async def headlines(self):
        crews = [DraftCrew().crew().kickoff_async(inputs={"topic": t, "round": 0}) for t in ("sencha", "matcha")]
        results = await asyncio.gather(*crews)
        self.state.notes.append(f"headlines {len(results)}")
        return "headlines"

    @listen("approved")
    def archive(self):
        with open("archive.txt", "w", encoding="utf-8") as file:
            file.write(self.state.draft)
        self.state.notes.append("archived")
        return "archived"

    @listen(and_(headlines, archive))
    def publish(self):
        self.state.notes.append("published")
        return f"published {self.state.topic} after {self.state.rounds} rounds"


def kickoff():
    ReviewLoopFlow().kickoff()


if __name__ == "__main__":
    kickoff()
