from typing import List

from crewai import Agent, Crew, Process, Task
from crewai.agents.agent_builder.base_agent import BaseAgent
from crewai.project import CrewBase, agent, crew, task
from pydantic import BaseModel, Field

from latest_ai.tools.custom_tool import MyCustomTool
from latest_ai.tools.text_tools import word_count
from latest_ai.types import ResearchFindings

# If you want to run a snippet of code before or after the crew starts,
# you can use the @before_kickoff and @after_kickoff decorators
# https://docs.crewai.com/concepts/crews#example-crew-class-with-decorators


class Section(BaseModel):
    heading: str
    body: str


class Report(BaseModel):
    title: str
    sections: List[Section] = Field(default_factory=list)


@CrewBase
class LatestAi:
    """LatestAi crew"""

    agents: List[BaseAgent]
    tasks: List[Task]

    @agent
    def researcher(self) -> Agent:
        return Agent(
            config=self.agents_config["researcher"],  # type: ignore[index]
            tools=[MyCustomTool(), word_count],
            verbose=True,
        )

    @agent
    def analyst(self) -> Agent:
        return Agent(
            config=self.agents_config["reporting_analyst"],  # type: ignore[index]
            verbose=True,
            allow_delegation=False,
            max_iter=5,
        )

    @task
    def research_task(self) -> Task:
        return Task(
            config=self.tasks_config["research_task"],  # type: ignore[index]
            output_pydantic=ResearchFindings,
        )

    @task
    def write_report(self) -> Task:
        return Task(
            config=self.tasks_config["reporting_task"],  # type: ignore[index]
            agent=self.analyst(),
            context=[self.research_task()],
            output_pydantic=Report,
            output_file="report.md",
        )

    @crew
    def crew(self) -> Crew:
        """Creates the LatestAi crew"""
        return Crew(
            agents=self.agents,
            tasks=self.tasks,
            process=Process.sequential,
            verbose=True,
            memory=True,
            planning=True,
        )
