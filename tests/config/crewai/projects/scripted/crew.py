import yaml
from crewai import Agent, Crew, Task

with open("config/agents.yaml") as f:
    agents = yaml.safe_load(f)

analyst = Agent(**agents["analyst"])
analysis = Task(description="Analyse {ticker}.", expected_output="A verdict.", agent=analyst)

# drives the task itself, outside any crew
first = analysis.execute_sync()
crew = Crew(agents=[analyst], tasks=[analysis])
result = crew.kickoff(inputs={"ticker": "ACME", "draft": first.raw})
print(result)
