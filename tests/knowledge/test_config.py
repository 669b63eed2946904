"""``knowledge:`` in crew.yaml and ``knowledge_sources`` in a CrewAI crew.py, read into sources."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from crew import Agent, Crew, Task
from crew.config import load_project
from crew.errors import ConfigError
from crew.knowledge import CSVKnowledgeSource, PDFKnowledgeSource, StringKnowledgeSource, TextFileKnowledgeSource

CREW_YAML = """
llm: test
knowledge:
  - manual.pdf
  - content: The office opens at 9.
agents:
  writer:
    role: Writer
    goal: Write
    knowledge:
      - file: staff.csv
        chunk_size: 1000
      - files: [notes.md]
        type: text
tasks:
  answer:
    description: Answer {question}
    expected_output: An answer
    agent: writer
"""


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


def test_yaml_knowledge_per_crew_and_per_agent(tmp_path: Path):
    (tmp_path / "knowledge").mkdir()
    crew = load_project(write(tmp_path, {"crew.yaml": CREW_YAML})).crew
    pdf, string = crew.knowledge_sources
    assert isinstance(pdf, PDFKnowledgeSource) and pdf.file_paths == ["manual.pdf"]
    assert isinstance(string, StringKnowledgeSource) and string.content == "The office opens at 9."
    csv, text = crew.agents[0].knowledge_sources
    assert isinstance(csv, CSVKnowledgeSource) and csv.chunk_size == 1000
    assert isinstance(text, TextFileKnowledgeSource) and text.file_paths == ["notes.md"]
    assert crew.knowledge_folder == (tmp_path / "knowledge").resolve()


def test_yaml_knowledge_mistakes_are_located(tmp_path: Path):
    bad = CREW_YAML.replace("type: text", "type: txt").replace("- content: The office", "- contnt: The office")
    with pytest.raises(ConfigError) as caught:
        load_project(write(tmp_path, {"crew.yaml": bad}))
    assert [error.rsplit("/", 1)[-1] for error in caught.value.errors] == [
        "crew.yaml:4: knowledge[1]: unknown key 'contnt' (did you mean 'content'?)",
        "crew.yaml:12: agents.writer.knowledge[1]: unknown type 'txt' (did you mean 'text'?) "
        "(one of text, pdf, csv, json)",
    ]


def test_python_takes_only_knowledge_sources():
    agent = Agent(role="r", goal="g", llm="test", knowledge_sources=[StringKnowledgeSource(content="x")])
    with pytest.raises(ValueError, match="knowledge_sources takes knowledge sources such as"):
        Crew(agents=[agent], tasks=[Task(description="d", expected_output="e", agent=agent)], knowledge_sources=["x"])


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
    from crew.testing.pdf import write_pdf

    folder = write(tmp_path, {**CREWAI_PROJECT, **changes})
    (folder / "knowledge").mkdir()
    write_pdf(
        folder / "knowledge" / "manual.pdf",
        [
            "Welcome. Charge the headset before first use.",
            "Health and safety. Take a break every 30 minutes, even if you do not feel you need one.",
        ],
    )
    return folder


def test_crewai_knowledge_sources_are_read_not_ignored(tmp_path: Path):
    project = load_project(crewai_project(tmp_path))
    assert not [w for w in project.warnings if "knowledge" in str(w)]
    [pdf] = project.crew.knowledge_sources
    assert isinstance(pdf, PDFKnowledgeSource) and pdf.file_paths == ["manual.pdf"]
    assert [s.content for s in project.crew.agents[0].knowledge_sources] == ["The headset is called Quest."]
    assert project.crew.knowledge_folder == (tmp_path / "knowledge").resolve()  # the project root's, as CrewAI


def test_a_crewai_knowledge_source_crew_cannot_read_is_an_error_at_its_line(tmp_path: Path):
    crew_py = CREWAI_PROJECT["src/quest_help/crew.py"].replace(
        'PDFKnowledgeSource(file_paths=["manual.pdf"])', "ExcelKnowledgeSource(file_paths=FILES)"
    )
    with pytest.raises(ConfigError) as caught:
        load_project(crewai_project(tmp_path, **{"src/quest_help/crew.py": crew_py}))
    [error] = caught.value.errors
    assert "src/quest_help/crew.py:6: knowledge_sources: `ExcelKnowledgeSource(file_paths=FILES)`: crew reads" in error
