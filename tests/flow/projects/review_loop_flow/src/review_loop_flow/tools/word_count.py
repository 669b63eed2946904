from typing import Type

from crewai.tools import BaseTool
from pydantic import BaseModel, Field


class WordCountInput(BaseModel):
    text: str = Field(..., description="The text whose words to count.")


class WordCountTool(BaseTool):
    name: str = "Word Count"
    description: str = "Counts the words of a text."
    args_schema: Type[BaseModel] = WordCountInput

    def _run(self, text: str) -> int:
        return len(text.split())
