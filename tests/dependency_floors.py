"""The floors pyproject.toml declares, as pip constraints: `make test-min` installs uibridge with every extra under
them, so the suite runs on exactly the lowest versions a user's resolver may pick.

Each requirement of `[project] dependencies` and of every extra but `dev` (the tools that run the suite, which
resolve as usual within these pins) becomes `name==floor`, its `>=` bound. Pinning each floor, rather than asking
a resolver for the lowest direct versions, keeps what runs equal to what is declared: where a dependency needs
more than a declared floor, the install fails and names both, instead of quietly running a higher version. Other
packages (what the dependencies pull in) resolve to their newest versions that fit the pins.

    python tests/dependency_floors.py > floors.txt   # the constraints, one `name==floor` a line
    python tests/dependency_floors.py --extras       # the extras to install with them: `server,client,...`
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[1] / 'pyproject.toml'
TOOLS_EXTRA = 'dev'


def runtime_requirements(project: dict[str, Any]) -> dict[str, list[str]]:
    """The requirement texts a user may install, by where they are declared (`dependencies`, or an extra's name)."""
    groups: dict[str, list[str]] = {'dependencies': project.get('dependencies', [])}
    for extra, requirements in project.get('optional-dependencies', {}).items():
        if extra != TOOLS_EXTRA:
            groups[extra] = requirements
    return groups


def declared_floors(project: dict[str, Any]) -> dict[str, Version]:
    """Each runtime requirement's `>=` bound by package name (the highest, where two places name one package).
    A requirement with no `>=` bound has no floor to run, and is refused."""
    floors: dict[str, Version] = {}
    for group, requirements in runtime_requirements(project).items():
        for text in requirements:
            requirement = Requirement(text)
            bounds = [Version(spec.version) for spec in requirement.specifier if spec.operator == '>=']
            if not bounds:
                raise SystemExit(f'{group}: {text!r} declares no floor (`>=`): give it the lowest version it needs')
            name = canonicalize_name(requirement.name)
            floors[name] = max(max(bounds), floors.get(name, max(bounds)))
    return floors


def main(arguments: list[str]) -> None:
    project: dict[str, Any] = tomllib.loads(PYPROJECT.read_text(encoding='utf-8'))['project']
    if arguments == ['--extras']:
        print(','.join(group for group in runtime_requirements(project) if group != 'dependencies'))
    elif not arguments:
        for name, floor in sorted(declared_floors(project).items()):
            print(f'{name}=={floor}')
    else:
        raise SystemExit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])
