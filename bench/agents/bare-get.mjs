// The yardstick of `svc items list --json`: what a person would write in plain Node to make the
// same GET (node:http, the token as a bearer, one page of 100) and print the items as svc does
// (JSON, two-space indent). Usage: node bare-get.mjs BASE_URL TOKEN PROJECT
import { get } from 'node:http';

const [base, token, project] = process.argv.slice(2);
get(`${base}/api/v1/projects/${project}/work-items?limit=100`, { headers: { accept: 'application/json', authorization: `Bearer ${token}` } }, (res) => {
  const parts = [];
  res.on('data', (d) => parts.push(d));
  res.on('end', () => {
    if (res.statusCode !== 200) {
      process.stderr.write(`GET ${res.statusCode}: ${Buffer.concat(parts)}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`${JSON.stringify(JSON.parse(Buffer.concat(parts).toString('utf8')).items, null, 2)}\n`);
  });
});
