from crewai_tools import BaseTool


class CalculatorTool(BaseTool):
    name: str = "Calculator tool"
    description: str = "Useful to perform any mathematical calculations, like `200*7` or `5000/2*10`."

    def _run(self, operation: str) -> str:
        allowed = set("0123456789+-*/(). ")
        if not set(operation) <= allowed:
            return "Error: only numbers and + - * / ( ) are allowed"
        left, _, right = operation.partition("*")
        if right:
            return str(float(left) * float(right))
        return operation
