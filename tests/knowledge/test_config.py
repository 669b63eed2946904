"""``knowledge:`` in crew.yaml and ``knowledge_sources`` in a CrewAI crew.py, read into sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from knowledge_kit import CREWAI_PROJECT, crewai_project, write

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


def knowledge_files(folder: Path) -> Path:
    from crew.testing.pdf import write_pdf

    write(folder / "knowledge", {"staff.csv": "name,role\nAda,engineer\n", "notes.md": "# Notes\n"})
    write_pdf(folder / "knowledge" / "manual.pdf", ["The manual."])
    return folder


def test_yaml_knowledge_per_crew_and_per_agent(tmp_path: Path):
    crew = load_project(write(knowledge_files(tmp_path), {"crew.yaml": CREW_YAML})).crew
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
        load_project(write(knowledge_files(tmp_path), {"crew.yaml": bad}))
    assert [error.rsplit("/", 1)[-1] for error in caught.value.errors] == [
        "crew.yaml:4: knowledge[1]: unknown key 'contnt' (did you mean 'content'?)",
        "crew.yaml:12: agents.writer.knowledge[1]: unknown type 'txt' (did you mean 'text'?) "
        "(one of text, pdf, csv, json)",
    ]


def test_a_missing_file_or_a_path_out_of_knowledge_is_said_at_its_line(tmp_path: Path):
    bad = CREW_YAML.replace("- manual.pdf", "- manuel.pdf").replace("files: [notes.md]", "files: [../crew.yaml]")
    with pytest.raises(ConfigError) as caught:
        load_project(write(knowledge_files(tmp_path), {"crew.yaml": bad}))
    first, second = caught.value.errors
    assert "crew.yaml:3: knowledge[0]: knowledge source manuel.pdf: no such file (" in first
    assert "crew.yaml:12: agents.writer.knowledge[1]: knowledge source ../crew.yaml: the path leaves" in second


def test_python_takes_only_knowledge_sources():
    agent = Agent(role="r", goal="g", llm="test", knowledge_sources=[StringKnowledgeSource(content="x")])
    with pytest.raises(ValueError, match="knowledge_sources takes knowledge sources such as"):
        Crew(agents=[agent], tasks=[Task(description="d", expected_output="e", agent=agent)], knowledge_sources=["x"])


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
