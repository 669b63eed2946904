"""Knowledge: documents a crew's agents read, chunked, indexed once and searched per task.

``sources`` holds the declarations, named and shaped as CrewAI's (``StringKnowledgeSource``,
``TextFileKnowledgeSource``, ``PDFKnowledgeSource``, ``CSVKnowledgeSource``,
``JSONKnowledgeSource``); ``readers`` reads each kind of file as a stream with located errors;
``chunking`` cuts the stream into overlapping chunks. Nothing here reads a file, or imports
pypdf, until a source is indexed.

May import: the run layer and below (``crew.errors``, ``crew.common``, the search core); it sits in
the run layer so that ``Crew`` can index its sources before a run (nothing in it calls a crew).
"""

from __future__ import annotations

from crew.knowledge.chunking import Chunk
from crew.knowledge.sources import (
    BaseFileKnowledgeSource,
    BaseKnowledgeSource,
    CSVKnowledgeSource,
    JSONKnowledgeSource,
    PDFKnowledgeSource,
    StringKnowledgeSource,
    TextFileKnowledgeSource,
)

__all__ = [
    "BaseFileKnowledgeSource",
    "BaseKnowledgeSource",
    "CSVKnowledgeSource",
    "Chunk",
    "JSONKnowledgeSource",
    "PDFKnowledgeSource",
    "StringKnowledgeSource",
    "TextFileKnowledgeSource",
]
