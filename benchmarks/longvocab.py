"""Word lists and templates of the long-answer benchmark (``benchmarks.longgen``), English and Chinese.

A fact is one sentence with a project's name and a value, asked back later in other words.
Filler is what a chat assistant writes around it: explanations, steps, caveats, code.
"""

from __future__ import annotations

PROJECTS_EN = (
    "Falcon", "Lighthouse", "Orchard", "Basalt", "Juniper", "Meridian", "Quartz", "Tundra",
    "Harbor", "Willow", "Cobalt", "Saffron", "Granite", "Nimbus", "Pelican", "Redwood",
)  # fmt: skip
PROJECTS_ZH = (
    "青鸟", "星河", "蓝鲸", "白鹭", "松果", "晨曦", "远山", "锦鲤",
    "北斗", "石榴", "云雀", "银杏", "海棠", "玄武", "竹林", "火烈鸟",
)  # fmt: skip
PEOPLE_EN = ("Priya", "Marcus", "Elena", "Tom", "Aisha", "Diego", "Hannah", "Kenji", "Olga", "Sam")
PEOPLE_ZH = ("王磊", "李娜", "张伟", "刘洋", "陈静", "杨帆", "赵敏", "周杰", "吴昊", "孙悦")
DATABASES = ("PostgreSQL", "MySQL", "SQLite", "MongoDB", "ClickHouse", "Redis", "DuckDB", "Cassandra")
REGIONS = ("Frankfurt", "Singapore", "Oregon", "Tokyo", "São Paulo", "Mumbai", "Dublin", "Sydney")
REGIONS_ZH = ("法兰克福", "新加坡", "俄勒冈", "东京", "圣保罗", "孟买", "都柏林", "悉尼")
LIBRARIES = ("httpx", "pydantic", "numpy", "fastapi", "sqlalchemy", "celery", "pandas", "requests")

FACTS: dict[str, dict[str, tuple[str, str]]] = {
    # kind: language: (the sentence inside the answer, the question asked later)
    "backup": {
        "en": (
            "For {p}, schedule the nightly backup at {time} and keep the last {n} copies.",
            "What time should the nightly backup of {p} run?",
        ),
        "zh": ("{p} 的夜间备份安排在 {time} 执行，保留最近 {n} 份。", "{p} 每天晚上几点做备份来着？"),
    },
    "port": {
        "en": (
            "The {p} API should listen on port {port} behind the reverse proxy.",
            "Which port did we pick for the {p} service?",
        ),
        "zh": ("{p} 的接口服务监听 {port} 端口，前面挂反向代理。", "{p} 的服务用的是哪个端口？"),
    },
    "retry": {
        "en": (
            "In {p}, set the retry limit to {n} attempts with a {s}-second timeout per call.",
            "How many times does {p} retry a failed call?",
        ),
        "zh": ("{p} 里把重试次数设为 {n} 次，每次调用超时 {s} 秒。", "{p} 调用失败以后会重试几次？"),
    },
    "database": {
        "en": ("{p} keeps its records in {db}, with one schema per tenant.", "What database does {p} store data in?"),
        "zh": ("{p} 的数据放在 {db} 里，每个租户一个 schema。", "{p} 的数据存在什么数据库里？"),
    },
    "owner": {
        "en": (
            "{person} owns the on-call rotation for {p}, so page {person} first when it breaks.",
            "Who should I contact when {p} goes down?",
        ),
        "zh": ("{p} 的值班由{person}负责，出故障先找{person}。", "{p} 挂了应该先联系谁？"),
    },
    "region": {
        "en": ("{p} is deployed to the {region} region to stay close to its users.", "Where is {p} hosted?"),
        "zh": ("{p} 部署在{region}区域，离用户比较近。", "{p} 部署在哪个地区的机房？"),
    },
    "cache": {
        "en": (
            "Cache {p}'s search results for {n} minutes; longer and users see stale prices.",
            "How long are {p}'s search results kept in the cache?",
        ),
        "zh": ("{p} 的搜索结果缓存 {n} 分钟，再长用户就会看到过期的价格。", "{p} 的搜索结果缓存多久？"),
    },
    "pin": {
        "en": (
            "Pin {lib} to version {ver} in {p}; the next release breaks its client.",
            "Which {lib} version is {p} pinned to?",
        ),
        "zh": ("{p} 里要把 {lib} 固定在 {ver} 版本，新版会把客户端弄坏。", "{p} 用的 {lib} 锁在哪个版本？"),
    },
}

ASKS = {
    "en": (
        "Can you help me plan the next steps for {p}? We are getting ready for the launch.",
        "I need a checklist for hardening {p} before the audit next month.",
        "Write me a short design note for {p}: deployment, data, operations.",
        "We keep having incidents with {p}. What should we change?",
        "How would you set up {p} so a new teammate can run it on day one?",
    ),
    "zh": (
        "帮我规划一下{p}接下来的工作，我们准备上线了。",
        "下个月要审计，帮我列一份{p}的加固清单。",
        "给{p}写一份简短的设计说明：部署、数据、运维。",
        "{p}最近老出事故，你觉得我们该改哪些地方？",
        "怎么配置{p}才能让新同事第一天就跑起来？",
    ),
}

FILLER = {
    "en": (
        "Start by writing down what the service must never lose, because that decides everything else.",
        "Logs should be structured, one JSON object a line, so that they can be searched later.",
        "Keep configuration in one file under version control and validate it at start-up.",
        "A health endpoint that checks the database connection saves a lot of guessing during incidents.",
        "Run the test suite on every pull request and block merges when it fails.",
        "Measure before you optimise: a profiler usually points somewhere you did not expect.",
        "Secrets belong in the environment or a vault, never in the repository or the logs.",
        "Document the runbook next to the code so that it changes when the code changes.",
        "Prefer small, frequent releases; a rollback is then a one-line change.",
        "Alert on symptoms users feel, like error rate and latency, not on every internal metric.",
        "Rate limits protect you from your own retry storms as much as from abuse.",
        "Give every request an id and pass it along so that one failure can be traced across services.",
        "Migrations should be reversible, and each one small enough to review in a few minutes.",
        "Load tests are most useful when they replay real traffic shapes rather than a flat rate.",
        "Keep dependencies few and update them on a schedule, not only when something breaks.",
        "A staging environment that mirrors production catches most configuration mistakes.",
        "Write the error messages for the person who will read them at three in the morning.",
        "Back-pressure is better than unbounded queues: a queue that grows forever is a delayed outage.",
        "Feature flags let you ship code dark and turn it on when the team is ready.",
        "Clean up old data regularly; tables that only grow eventually slow every query down.",
        "Timeouts need to be set on every network call, otherwise one slow dependency stalls everything.",
        "Code review is about shared understanding first and catching bugs second.",
        "Keep the on-call handbook short: what to check, whom to call, how to roll back.",
        "Capacity planning can be simple: measure peak usage and keep twice that in reserve.",
    ),
    "zh": (
        "先把服务绝对不能丢的东西写下来，其他决定都取决于这一点。",
        "日志最好是结构化的，一行一个 JSON 对象，以后才方便检索。",
        "配置集中放在一个受版本控制的文件里，启动时先做校验。",
        "健康检查接口顺便检查一下数据库连接，出事故时能少猜很多。",
        "每个合并请求都要跑完整的测试，失败就不允许合并。",
        "优化之前先测量，性能分析工具经常指向你想不到的地方。",
        "密钥应该放在环境变量或者密钥管理服务里，不要进代码仓库，也不要打进日志。",
        "运维手册和代码放在一起，代码改了手册也跟着改。",
        "发布尽量小步快跑，这样回滚只是一行改动。",
        "告警要针对用户能感受到的症状，比如错误率和延迟，而不是每个内部指标。",
        "限流不只是防滥用，也能防止你自己的重试把系统打垮。",
        "每个请求都带一个编号并一路传下去，一次失败才能跨服务追踪。",
        "数据库迁移要可回退，每一步都小到几分钟就能审完。",
        "压测最好回放真实的流量形态，而不是恒定的速率。",
        "依赖越少越好，并且定期升级，不要等出了问题才动。",
        "和生产环境一致的预发布环境能拦住大部分配置错误。",
        "错误信息要写给凌晨三点被叫起来的那个人看。",
        "背压比无界队列好，一直变长的队列只是推迟了的故障。",
        "功能开关可以让代码先悄悄上线，等团队准备好再打开。",
        "旧数据要定期清理，只增不减的表迟早会拖慢所有查询。",
        "每个网络调用都要设置超时，否则一个慢依赖会拖住整个系统。",
        "代码评审首先是为了大家理解一致，其次才是找 bug。",
        "值班手册要短：查什么、找谁、怎么回滚。",
        "容量规划可以很简单：测出峰值用量，预留两倍。",
    ),
}

HEADINGS = {
    "en": ("## Deployment", "## Data", "## Operations", "## Testing", "## Security", "## Next steps"),
    "zh": ("## 部署", "## 数据", "## 运维", "## 测试", "## 安全", "## 下一步"),
}

CODE = (
    "```python\nimport logging\n\nlog = logging.getLogger('{slug}')\n\n\ndef handle(event: dict) -> dict:\n"
    "    items = [item for item in event.get('records', []) if item.get('ok')]\n"
    "    log.info('handled %d records', len(items))\n    return {{'count': len(items)}}\n```",
    "```yaml\nservice: {slug}\nreplicas: 3\nresources:\n  cpu: 500m\n  memory: 512Mi\nprobes:\n"
    "  readiness: /healthz\n  liveness: /healthz\n```",
    "```bash\nset -euo pipefail\ngit pull --ff-only\nmake test\ndocker build -t {slug}:latest .\n"
    "docker compose up -d {slug}\n```",
    "```sql\nCREATE TABLE {slug}_events (\n  id BIGSERIAL PRIMARY KEY,\n  tenant TEXT NOT NULL,\n"
    "  payload JSONB NOT NULL,\n  created_at TIMESTAMPTZ DEFAULT now()\n);\n```",
)

CLOSINGS = {
    "en": ("Tell me if you want any of these steps in more detail.", "Happy to go deeper on any part of this."),
    "zh": ("需要哪一步展开讲，告诉我就行。", "哪部分想再深入，随时说。"),
}
