// Reads [{"name": ..., "text": ...}, ...] as JSON on stdin and prints, as JSON on stdout,
// [{"name": ..., "errors": [...], "warnings": [...]}] from Neo4j's Cypher 5 front-end.
// Parameters are declared by the caller at run time, so "Parameter $x is not defined" is not
// an error here.
'use strict';
const { lintCypherQuery } = require('@neo4j-cypher/language-support');

const PARAM_NOT_DEFINED = /^Parameter \$\S+ is not defined\.?$/;

function main(input) {
  const statements = JSON.parse(input);
  const out = statements.map(({ name, text }) => {
    const { diagnostics } = lintCypherQuery(text, { defaultLanguage: 'CYPHER 5' });
    const relevant = diagnostics.filter((d) => !PARAM_NOT_DEFINED.test(d.message));
    const describe = (d) => `line ${d.range.start.line + 1}, col ${d.range.start.character + 1}: ${d.message}`;
    return {
      name,
      errors: relevant.filter((d) => d.severity === 1).map(describe),
      warnings: relevant.filter((d) => d.severity !== 1).map(describe),
    };
  });
  process.stdout.write(JSON.stringify(out));
}

let data = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { data += chunk; });
process.stdin.on('end', () => main(data));
