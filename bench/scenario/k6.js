// For reference only (docs; k6 is AGPL and is not run by the benchmark):
// the same journey as journey.toml and locustfile.py.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 50, duration: '10s' };
const BASE = __ENV.BENCH_BASE;

export default function () {
  if (__ITER === 0) {
    const login = http.post(`${BASE}/login`, 'user=u1&password=secret', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      redirects: 0,
    });
    check(login, { 'logged in': (r) => r.status === 302 });
  }
  const list = http.get(`${BASE}/api/items`);
  const id = list.json('items.1.id');
  const item = http.get(`${BASE}/item/${id}`, { tags: { name: '/item/[id]' } });
  check(item, { 'item ok': (r) => r.json('ok') === true });
}
