"""The issue-25 benchmark's journey (bench/scenario.sh) for Locust: the same
three requests as journey.toml, with FastHttpUser and no wait between tasks
(a closed loop at full speed)."""

from locust import FastHttpUser, constant, task


class Browser(FastHttpUser):
    wait_time = constant(0)

    def on_start(self):
        # Log in once per user (a 302 is the expected answer).
        with self.client.post(
            "/login",
            data="user=u1&password=secret",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            allow_redirects=False,
            catch_response=True,
        ) as r:
            if r.status_code != 302:
                r.failure(f"login answered {r.status_code}")

    @task
    def browse(self):
        items = self.client.get("/api/items").json()
        item = items["items"][1]["id"]
        with self.client.get(f"/item/{item}", name="/item/[id]", catch_response=True) as r:
            if r.json().get("ok") is not True:
                r.failure("item not ok")
