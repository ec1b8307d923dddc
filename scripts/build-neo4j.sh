#!/usr/bin/env bash
# Builds the managed Neo4j's launcher (server/neo4j-launcher): Maven fetches Neo4j Community and
# its dependencies into ~/.m2 (once, ~130 MB) and records the runtime classpath in
# target/classpath.txt, which covr.graph.neo4j_server reads.
set -euo pipefail
cd "$(dirname "$0")/../server/neo4j-launcher"

hint="install Java 17+ and Maven (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven), or use the embedded FalkorDB (the default) or an external Neo4j (COVR_GRAPH_URI=bolt://...)"
if ! command -v java >/dev/null 2>&1; then
  echo "error: the managed Neo4j needs java, which is not on PATH; $hint" >&2
  exit 1
fi
if ! command -v mvn >/dev/null 2>&1; then
  echo "error: the managed Neo4j is built with Maven (mvn), which is not on PATH; $hint" >&2
  exit 1
fi
major=$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
if [ "${major%%.*}" -lt 17 ] 2>/dev/null; then
  echo "error: the managed Neo4j needs Java 17 or newer, found $major; $hint" >&2
  exit 1
fi
echo "building the managed Neo4j launcher (Maven; the first build downloads Neo4j Community)"
mvn --batch-mode --quiet --no-transfer-progress -Dstyle.color=never package
test -s target/covr-neo4j-launcher.jar && test -s target/classpath.txt
