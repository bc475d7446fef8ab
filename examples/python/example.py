"""Create a project, add a goal, a need and a job (under an approach, a job's parent) in one batch, list them and read the tree,
with the client generate.sh made from /openapi.json.

    ARBOR_API_URL=http://localhost:3000 ARBOR_API_KEY=arb_... .venv/bin/python example.py [project-id]
"""

import os
import sys
import uuid

from arbor_api_client import AuthenticatedClient
from arbor_api_client.api.mutate import mutate
from arbor_api_client.api.tree import get_tree, list_nodes
from arbor_api_client.models import (
    GetTreeDirection,
    GetTreeResponse200,
    ListNodesResponse200,
    MutateAddProject,
    MutateAddProjectMutate200,
    MutateBatch,
    MutateBatchMutate200,
)


def check(answer, expected_type, what):
    """The parsed answer when it is the expected one; anything else (ErrorList, Refusal) stops the example."""
    if not isinstance(answer, expected_type):
        sys.exit(f"{what}: {answer!r}")
    return answer


def main() -> None:
    base = os.environ.get("ARBOR_API_URL", "http://localhost:3000")
    client = AuthenticatedClient(base_url=base, token=os.environ["ARBOR_API_KEY"])
    project_id = sys.argv[1] if len(sys.argv) > 1 else f"py-{uuid.uuid4().hex[:8]}"

    project = mutate.sync(
        client=client,
        body=MutateAddProject.from_dict({"action": "addProject", "project": {"id": project_id, "name": "Python example"}}),
    )
    check(project, MutateAddProjectMutate200, "addProject")

    # one batch, one transaction: later entries name earlier ones by their draft- id
    batch = mutate.sync(
        client=client,
        body=MutateBatch.from_dict(
            {
                "action": "batch",
                "projectId": project_id,
                "mutations": [
                    {"action": "add", "node": {"id": "draft-goal", "type": "goal", "data": {"label": "Customers pay by direct debit"}}},
                    {
                        "action": "add",
                        "node": {"id": "draft-need", "type": "need", "parentId": "draft-goal", "data": {"label": "Collect SEPA mandates"}},
                    },
                    {
                        "action": "add",
                        "node": {"id": "draft-bet", "type": "approach", "parentId": "draft-need", "data": {"label": "Use the bank's mandate API"}},
                    },
                    {
                        "action": "add",
                        "node": {"id": "draft-job", "type": "job", "parentId": "draft-bet", "data": {"label": "Store a mandate per customer"}},
                    },
                ],
            }
        ),
    )
    batch = check(batch, MutateBatchMutate200, "batch")
    ids = batch.id_map.additional_properties
    print(f"batch: {len(batch.results)} nodes added: {ids}")

    nodes = check(list_nodes.sync(client=client, project_id=project_id), ListNodesResponse200, "listNodes")
    for node in nodes.nodes:
        print(f"  {node.type_.value:<5} {node.id:<10} parent={node.parent_id} {node.data.label}")

    tree = check(
        get_tree.sync(client=client, project_id=project_id, node_id=ids["draft-goal"], direction=GetTreeDirection.DOWN),
        GetTreeResponse200,
        "getTree",
    )
    print(f"tree down from {ids['draft-goal']}:")
    for node in tree.nodes:
        print(f"  {'  ' * node.depth}{node.id}: {node.data.label}")
    if [n.type_.value for n in nodes.nodes] != ["goal", "need", "approach", "job"]:
        sys.exit("listNodes did not answer the goal, the need, the approach and the job")


if __name__ == "__main__":
    main()
