from crewai import Agent, Crew, Process, Task, LLM
from crewai.project import CrewBase, agent, crew, task
from pydantic import BaseModel, Field

# the crew's folder first on the path, as `python src/market_desk/main.py` has it
from tools.calculator_tool import CalculatorTool


class MarketEstimate(BaseModel):
    """Market estimate model"""
    units: int = Field(..., description="Units sold next year")
    revenue: float = Field(..., description="Revenue next year, in dollars")


@CrewBase
class MarketDeskCrew:
    """MarketDesk crew"""
    agents_config = 'config/agents.yaml'
    tasks_config = 'config/tasks.yaml'
    llm = LLM(model="openai/gpt-4o-mini", temperature=0.3)

    @agent
    def analyst(self) -> Agent:
        return Agent(
            config=self.agents_config['market_analyst'],
            tools=[CalculatorTool()],
            llm=self.llm,
            verbose=True,
        )

    @agent
    def writer(self) -> Agent:
        return Agent(
            config=self.agents_config['desk_writer'],
            llm=self.llm,
        )

    @task
    def size_market(self) -> Task:
        return Task(
            config=self.tasks_config['size_market'],
            agent=self.analyst(),
            output_json=MarketEstimate,
        )

    @task
    def morning_note(self) -> Task:
        return Task(
            config=self.tasks_config['morning_note'],
            agent=self.writer(),
            context=[self.size_market()],
        )

    @crew
    def crew(self) -> Crew:
        """Creates the MarketDesk crew"""
        return Crew(
            agents=self.agents,
            tasks=self.tasks,
            process=Process.sequential,
            verbose=2,
        )
