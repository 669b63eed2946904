from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task

from review_loop_flow.types import Verdict


@CrewBase
class ReviewCrew:
    """Review Crew"""

    agents_config = "config/agents.yaml"
    tasks_config = "config/tasks.yaml"

    @agent
    def editor(self) -> Agent:
        return Agent(config=self.agents_config["editor"], verbose=True)

    @task
    def review_draft(self) -> Task:
        return Task(config=self.tasks_config["review_draft"], output_pydantic=Verdict)

    @crew
    def crew(self) -> Crew:
        """Creates the Review Crew"""
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
