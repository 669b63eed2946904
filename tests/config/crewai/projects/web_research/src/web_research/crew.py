from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task
from crewai_tools import ScrapeWebsiteTool, SerperDevTool

search_tool = SerperDevTool()


@CrewBase
class WebResearch:
    """Built-in crewai_tools tools: used when crewai_tools is installed, else a clear stop."""

    agents_config = "config/agents.yaml"
    tasks_config = "config/tasks.yaml"

    @agent
    def searcher(self) -> Agent:
        return Agent(config=self.agents_config["searcher"], tools=[search_tool, ScrapeWebsiteTool()])

    @agent
    def reader(self) -> Agent:
        return Agent(config=self.agents_config["reader"], tools=[ScrapeWebsiteTool()])

    @task
    def search_task(self) -> Task:
        return Task(config=self.tasks_config["search_task"])

    @task
    def read_task(self) -> Task:
        return Task(config=self.tasks_config["read_task"])

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
