from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task, before_kickoff

from tools.search import market_search


@CrewBase
class LaunchCrew:
    """An older flat project: crew.py beside config/, method names unlike the config keys."""

    agents_config = "config/agents.yaml"
    tasks_config = "config/tasks.yaml"

    @before_kickoff
    def prepare(self, inputs):
        inputs["product"] = inputs.get("product", "").strip()
        return inputs

    @agent
    def scout(self) -> Agent:
        return Agent(config=self.agents_config["market_researcher"], tools=[market_search], verbose=False)

    @agent
    def writer(self) -> Agent:
        return Agent(config=self.agents_config["copywriter"], max_iter=3)

    @task
    def find_audience(self) -> Task:
        return Task(config=self.tasks_config["audience"])

    @task
    def write_post(self) -> Task:
        return Task(config=self.tasks_config["draft"], output_file="post.md")

    @task
    def title(self) -> Task:
        return Task(config=self.tasks_config["headline"], agent=self.writer(), context=[self.write_post()])

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential, verbose=False)


if __name__ == "__main__":
    LaunchCrew().crew().kickoff(inputs={"product": "a solar kettle"})
