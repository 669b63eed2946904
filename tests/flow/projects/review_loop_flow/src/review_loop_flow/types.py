from pydantic import BaseModel


class Verdict(BaseModel):
    score: int
    comment: str
