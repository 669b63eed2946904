from pydantic import BaseModel, Field


class ResearchFindings(BaseModel):
    """What the researcher hands the analyst."""

    topic: str
    bullet_points: list[str] = Field(description="the ten most relevant findings")
