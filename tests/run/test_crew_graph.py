"""The task DAG: checks with readable errors, orders, generations, critical path, ideal makespan."""

import subprocess
import sys
import textwrap
from itertools import pairwise

import pytest
from crew_testkit import Recorder, dag

from crew import Agent, Crew, Task
from crew.errors import GraphError
from crew.tasks.graph import TaskGraph


@pytest.fixture
def agent():
    return Recorder().agent()


def test_a_cycle_is_reported_with_its_path(agent):
    a = Task(name="a", description="a", agent=agent)
    b = Task(name="b", description="b", agent=agent, context=[a])
    c = Task(name="c", description="c", agent=agent, context=[b])
    a.context = [c]
    other = Task(name="other", description="o", agent=agent)
    with pytest.raises(GraphError) as info:
        Crew(agents=[agent], tasks=[other, a, b, c], process="graph")
    assert str(info.value).endswith("a -> b -> c -> a")


def test_a_cycle_created_after_the_crew_was_built_fails_the_kickoff(agent):
    rec = Recorder()
    a = Task(name="a", description="a", agent=rec.agent())
    b = Task(name="b", description="b", agent=a.agent, context=["a"])
    crew = Crew(agents=[a.agent], tasks=[a, b], process="graph")
    a.context = ["b"]
    with pytest.raises(GraphError, match="a -> b -> a"):
        crew.kickoff()
    assert rec.calls == []


def test_in_sequential_a_context_on_a_later_task_is_a_cycle(agent):
    first = Task(name="first", description="f", agent=agent, context=["second"])
    second = Task(name="second", description="s", agent=agent)
    with pytest.raises(GraphError, match="first -> second -> first"):
        Crew(agents=[agent], tasks=[first, second])
    Crew(agents=[agent], tasks=[first, second], process="graph")  # fine without task order


def test_unknown_context_and_missing_agents_are_all_reported_by_name(agent):
    stranger = Task(name="stranger", description="not in the crew", agent=agent)
    tasks = [
        Task(name="research", description="r", agent=agent),
        Task(name="write", description="w", agent=agent, context=["reserch", stranger]),
        Task(name="review", description="v"),
        Task(name="loop", description="l", agent=agent, context=["loop"]),
    ]
    with pytest.raises(GraphError) as info:
        Crew(agents=[agent], tasks=tasks, process="graph")
    assert info.value.errors == [
        "task 'write' has context task 'reserch' that is not in the crew (did you mean 'research'?)",
        "task 'write' has context task 'stranger' that is not in the crew",
        "task 'review' has no agent: give it agent=... (only the hierarchical process assigns work)",
        "task 'loop' lists itself in its context",
    ]


def test_tasks_without_agents_are_fine_in_the_hierarchical_process():
    tasks = [Task(description="a"), Task(description="b")]
    crew = Crew(
        agents=[Agent(role="helper", goal="help", llm="test")], tasks=tasks, process="hierarchical", manager_llm="test"
    )
    assert crew.validate_graph().order == ["task_1", "task_2"]


def test_order_generations_and_critical_path(agent):
    tasks = dag(agent, {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"], "e": [], "f": ["e"], "g": ["d", "f"]})
    graph = Crew(agents=[agent], tasks=tasks, process="graph").validate_graph()
    assert graph.order == ["a", "b", "c", "d", "e", "f", "g"]
    assert graph.generations == [["a", "e"], ["b", "c", "f"], ["d"], ["g"]]
    assert graph.critical_path() == ["a", "b", "d", "g"]
    assert graph.critical_path({"c": 5}) == ["a", "c", "d", "g"]
    assert graph.remaining() == {"a": 4, "b": 3, "c": 3, "d": 2, "e": 3, "f": 2, "g": 1}
    assert graph.descendants("b") == {"d", "g"}
    assert graph.to_networkx().number_of_edges() == 7


def test_makespan_is_the_critical_path_or_the_concurrency_bound():
    names = [f"t{i}" for i in range(32)]
    independent = TaskGraph(names, {})
    assert independent.makespan() == 1
    assert independent.makespan(max_concurrency=8) == 4
    chain = TaskGraph(names[:8], {n: [p] for p, n in pairwise(names[:8])})
    assert chain.makespan(max_concurrency=8) == 8
    # one long chain next to short work: the chain must start first to keep the ideal
    graph = TaskGraph(["x1", "x2", "x3", "s1", "s2"], {"x2": ["x1"], "x3": ["x2"]})
    assert graph.makespan(max_concurrency=1) == 5
    assert graph.makespan(max_concurrency=2) == 3


def test_sequential_edges_follow_task_order_and_async_tasks_run_side_by_side(agent):
    flags = [False, True, True, False, True, False]
    tasks = [Task(name=f"t{i}", description="d", agent=agent, async_execution=f) for i, f in enumerate(flags)]
    graph = Crew(agents=[agent], tasks=tasks).validate_graph()
    assert graph.deps == {
        "t0": [],
        "t1": ["t0"],
        "t2": ["t0"],
        "t3": ["t0", "t1", "t2"],
        "t4": ["t3"],
        "t5": ["t3", "t4"],
    }
    assert graph.context["t5"] == ["t0", "t1", "t2", "t3", "t4"]
    assert graph.context["t4"] == ["t0", "t1", "t2", "t3"]
    assert graph.generations == [["t0"], ["t1", "t2"], ["t3"], ["t4"], ["t5"]]


def test_building_and_running_a_crew_never_imports_networkx_litellm_or_yaml():
    code = textwrap.dedent("""
        import sys
        from crew import Agent, Crew, Task
        agent = Agent(role="r", goal="g", llm="test")
        a = Task(name="a", description="a", agent=agent)
        crew = Crew(agents=[agent], tasks=[a, Task(description="b", agent=agent, context=[a])], process="graph")
        crew.kickoff()
        print("networkx" in sys.modules, "litellm" in sys.modules, "yaml" in sys.modules)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False False False"


def test_agents_only_named_by_tasks_belong_to_the_crew():
    rec = Recorder()
    listed, unlisted = rec.agent("Listed"), rec.agent("Unlisted")
    crew = Crew(agents=[listed], tasks=[Task(description="a", agent=unlisted), Task(description="b", agent=listed)])
    assert [a.role for a in crew.all_agents()] == ["Listed", "Unlisted"]
    assert isinstance(crew.all_agents()[0], Agent)


@pytest.mark.parametrize("seed", range(20))
def test_graph_algorithms_agree_with_networkx_on_random_dags(seed):
    """The checks run without networkx (its import would cost `crew validate` ~0.1 s); networkx is the oracle."""
    import random

    import networkx as nx

    rng = random.Random(seed)
    names = [f"t{i}" for i in range(rng.randint(1, 60))]
    deps = {n: rng.sample(names[:i], k=min(i, rng.randint(0, 4))) for i, n in enumerate(names)}
    weights = {n: rng.uniform(0.1, 2.0) for n in names}
    graph = TaskGraph(names, deps)
    nxg = graph.to_networkx()
    position = {n: i for i, n in enumerate(graph.order)}
    assert sorted(graph.order) == sorted(names)
    assert all(position[a] < position[b] for a, b in nxg.edges)
    assert [sorted(g) for g in graph.generations] == [sorted(g) for g in nx.topological_generations(nxg)]
    for n in names:
        assert graph.descendants(n) == nx.descendants(nxg, n)
    weighted = nx.DiGraph()  # node weights as the weight of each edge into the node, from a common source
    weighted.add_weighted_edges_from([(a, b, weights[b]) for a, b in nxg.edges])
    weighted.add_weighted_edges_from([("<start>", n, weights[n]) for n in names])
    longest = nx.dag_longest_path_length(weighted)
    path = graph.critical_path(weights)
    assert sum(weights[n] for n in path) == pytest.approx(longest)
    assert all(nxg.has_edge(a, b) for a, b in pairwise(path))


def test_cycle_detection_agrees_with_networkx():
    import networkx as nx

    names = ["a", "b", "c", "d"]
    deps = {"a": ["d"], "b": ["a"], "c": ["b"], "d": ["c"]}
    with pytest.raises(GraphError) as info:
        TaskGraph(names, deps)
    cycle = str(info.value).rsplit(": ", 1)[-1].split(" -> ")
    edges = {(d, n) for n, ds in deps.items() for d in ds}
    assert cycle[0] == cycle[-1] and all((x, y) in edges for x, y in pairwise(cycle))
    assert not nx.is_directed_acyclic_graph(nx.DiGraph(list(edges)))
