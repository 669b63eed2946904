from crewai import LLM, Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task

from review_loop_flow.tools.word_count import WordCountTool


@CrewBase
class DraftCrew:
    """Draft Crew"""

    agents_config = "config/agents.yaml"
    tasks_config = "config/tasks.yaml"
    llm = LLM(model="gpt-4o-mini")

    @agent
    def writer(self) -> Agent:
        return Agent(config=self.agents_config["writer"], tools=[WordCountTool()], llm=self.llm)

    @task
    def write_draft(self) -> Task:
        return Task(config=self.tasks_config["write_draft"])

    @crew
    def crew(self) -> Crew:
        """Creates the Draft Crew"""
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential, verbose=True)
