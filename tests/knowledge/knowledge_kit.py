"""Projects the knowledge tests share: a CrewAI project shaped as crewAI-examples' meta_quest_knowledge
(a PDF in knowledge/ at its root, read by a module-level PDFKnowledgeSource in crew.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from crew.testing.pdf import write_pdf

MANUAL = [
    "Welcome. Charge the headset before first use. Pair the controllers in the app.",
    "Health and safety. Take a break every 30 minutes, even if you do not feel you need one.",
    "Cleaning. Wipe the lenses with a dry microfibre cloth; never use water or alcohol.",
]


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


CREWAI_PROJECT = {
    "pyproject.toml": '[project]\nname = "quest_help"\nversion = "0.1.0"\n',
    "src/quest_help/__init__.py": "",
    "src/quest_help/config/agents.yaml": """
        expert:
          role: Headset Expert
          goal: Answer questions about the headset
          backstory: Knows the manual by heart.
    """,
    "src/quest_help/config/tasks.yaml": """
        answer:
          description: "Answer the user question from the knowledge sources. Question: {question}"
          expected_output: The best answer
          agent: expert
    """,
    "src/quest_help/crew.py": """
        from crewai import Agent, Crew, Process, Task
        from crewai.project import CrewBase, agent, crew, task
        from crewai.knowledge.source.pdf_knowledge_source import PDFKnowledgeSource
        from crewai.knowledge.source.string_knowledge_source import StringKnowledgeSource

        pdf_source = PDFKnowledgeSource(file_paths=["manual.pdf"])
        NOTE = "The headset is called Quest."

        @CrewBase
        class QuestHelp:
            agents_config = "config/agents.yaml"
            tasks_config = "config/tasks.yaml"

            @agent
            def expert(self) -> Agent:
                return Agent(
                    config=self.agents_config["expert"], knowledge_sources=[StringKnowledgeSource(content=NOTE)]
                )

            @task
            def answer(self) -> Task:
                return Task(config=self.tasks_config["answer"])

            @crew
            def crew(self) -> Crew:
                return Crew(
                    agents=self.agents, tasks=self.tasks, process=Process.sequential, knowledge_sources=[pdf_source]
                )
    """,
}


def crewai_project(tmp_path: Path, **changes: str) -> Path:
    folder = write(tmp_path, {**CREWAI_PROJECT, **changes})
    (folder / "knowledge").mkdir()
    write_pdf(folder / "knowledge" / "manual.pdf", MANUAL)
    return folder
