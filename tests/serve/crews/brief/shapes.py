from pydantic import BaseModel


class Brief(BaseModel):
    title: str
    summary: str
