"""A crew-native flow folder (a test fixture): flow.py beside the crew folder it calls."""

from pathlib import Path

from pydantic import BaseModel

from crew.config import load_crew
from crew.flow import Flow, listen, or_, router, start

HERE = Path(__file__).resolve().parent


class DigestState(BaseModel):
    topic: str = "rivers"
    summary: str = ""
    path: list[str] = []


class DigestFlow(Flow[DigestState]):
    @start()
    def gather(self):
        self.state.path.append("gather")
        return ["source one", "source two"]

    @listen(gather)
    def summarise(self, sources):
        output = load_crew(HERE / "summary").kickoff({"topic": self.state.topic, "sources": ", ".join(sources)})
        self.state.summary = output.raw
        self.state.path.append("summarise")
        return output.raw

    @router(summarise)
    def check(self):
        self.state.path.append("check")
        return "short" if len(self.state.summary) < 10_000 else "long"

    @listen(or_("short", "long"))
    def done(self):
        self.state.path.append("done")
        return f"digest of {self.state.topic}: {len(self.state.path)} steps"
