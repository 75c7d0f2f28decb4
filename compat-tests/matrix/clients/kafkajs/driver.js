'use strict'
// Compatibility-matrix driver for kafkajs 2.2.4 (see compat-tests/matrix and the
// per-client contract): runs every scenario against --bootstrap and prints one
// JSON line per scenario on stdout; kafkajs' own log and ours go to stderr.
// `run` installs the pinned packages and points NODE_PATH at them.

const crypto = require('crypto')
const fs = require('fs')

const ORDER = [
  'metadata', 'create_delete_topics', 'produce_acks0', 'produce_acks1', 'produce_acksall',
  'keys_headers_timestamps', 'compression_gzip', 'compression_snappy', 'compression_lz4',
  'compression_zstd', 'idempotent_produce', 'transactions', 'transactions_offsets', 'consume_earliest', 'consume_latest',
  'consume_timestamp', 'group_of_three', 'offsets_resume', 'admin_configs',
  'admin_grow_partitions', 'admin_groups', 'admin_delete_records', 'leader_failover',
]

function emit (scenario, status, detail) {
  process.stdout.write(JSON.stringify({ scenario, status, detail }) + '\n')
}
function log (...a) { process.stderr.write('[kafkajs] ' + a.join(' ') + '\n') }

const argv = process.argv.slice(2)
const bootstrap = argv[argv.indexOf('--bootstrap') + 1]
if (!bootstrap || argv.indexOf('--bootstrap') < 0) {
  log('usage: driver.js --bootstrap HOST:PORT [--security FILE]')
  process.exit(2)
}
// With --security FILE only the security columns run, each over its own
// listener (FILE's keys: compat-tests/matrix/security_columns.py).
const securityFile = argv.indexOf('--security') >= 0 ? argv[argv.indexOf('--security') + 1] : null
const columns = securityFile ? JSON.parse(fs.readFileSync(securityFile, 'utf8')) : null

// Every broker the harness started, node id -> host:port: $MATRIX_BROKERS
// ("1@host:port,2@host:port,..."), else node 1 at --bootstrap.
const expectedBrokers = Object.fromEntries(
  (process.env.MATRIX_BROKERS || '1@' + bootstrap.split(',')[0]).split(',').map(e => {
    const [id, addr] = e.split('@')
    return [Number(id), addr]
  }))

let kafkajs
try {
  kafkajs = require('kafkajs')
} catch (e) {
  for (const s of columns ? Object.keys(columns) : ORDER) emit(s, 'fail', 'kafkajs could not be loaded: ' + e.message)
  process.exit(0)
}
const {
  Kafka, logLevel, CompressionTypes, CompressionCodecs, ConfigResourceTypes, AssignerProtocol,
} = kafkajs

// -- codecs ------------------------------------------------------------------
// kafkajs ships gzip only; the others are plugins. Each codec is wrapped so the
// scenario can show it really ran on the produce side and on the fetch side.
const codecUse = {}
const codecMissing = {}
function counted (name, factory) {
  codecUse[name] = { compress: 0, decompress: 0 }
  return () => {
    const codec = factory()
    return {
      async compress (encoder) { codecUse[name].compress++; return codec.compress(encoder) },
      async decompress (buffer) { codecUse[name].decompress++; return codec.decompress(buffer) },
    }
  }
}
CompressionCodecs[CompressionTypes.GZIP] = counted('gzip', CompressionCodecs[CompressionTypes.GZIP])
try {
  CompressionCodecs[CompressionTypes.Snappy] = counted('snappy', require('kafkajs-snappy'))
} catch (e) {
  codecMissing.snappy = 'kafkajs-snappy 1.1.0 could not be loaded: ' + e.message
}
try {
  const LZ4Codec = require('kafkajs-lz4')
  const lz4 = new LZ4Codec().codec
  CompressionCodecs[CompressionTypes.LZ4] = counted('lz4', lz4)
} catch (e) {
  codecMissing.lz4 = 'kafkajs-lz4 1.2.1 (native lz4 0.6.5 addon) could not be loaded: ' + e.message
}
codecMissing.zstd = 'kafkajs ships no zstd codec; its plugin @kafkajs/zstd 0.1.1 pins cppzst 2.0.6, ' +
  'whose native addon does not compile against node 20 headers (they need C++17; its ' +
  'binding.gyp asks for an older standard: "remove_cv_t is not a member of std"), so kafkajs ' +
  'on node 20 cannot use zstd'

// -- helpers -----------------------------------------------------------------
const suffix = crypto.randomBytes(4).toString('hex')
const topicName = name => `kafkajs-${name}-${suffix}`
const groupName = name => `kafkajs-${name}-${suffix}`
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const range = n => Array.from({ length: n }, (_, i) => i)

function check (cond, message) {
  if (!cond) throw new Error(message)
}

async function waitFor (what, fn, ms = 20000, every = 200) {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error('timed out after ' + ms + ' ms waiting for ' + what)
    await sleep(every)
  }
}

function withTimeout (promise, ms, what) {
  let timer
  return Promise.race([
    promise,
    new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(what + ' timed out after ' + ms + ' ms')), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

// One Kafka per broker address (and, for a security column, its ssl and sasl).
const newKafka = (brokers, security = {}) => new Kafka({
  clientId: 'runnel-matrix-kafkajs',
  brokers,
  ...security,
  connectionTimeout: 3000,
  requestTimeout: 10000,
  retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
  logLevel: logLevel.WARN,
  logCreator: () => ({ namespace, label, log: entry }) => {
    const { message, ...extra } = entry
    // kafkajs logs every heartbeat answered "rebalance in progress" as an ERROR: routine here.
    if (namespace === 'Connection' && /rebalancing/.test(extra.error || '')) return
    process.stderr.write(`[kafkajs ${label}] ${namespace}: ${message} ${JSON.stringify(extra)}\n`)
  },
})
let kafka = newKafka(bootstrap.split(','))
let admin
const cleanups = [] // consumers/producers a failed scenario left connected

// createTopics' own waitForLeaders retries only LEADER_NOT_AVAILABLE, but a KRaft
// Kafka may answer UNKNOWN_TOPIC_OR_PARTITION for a moment after CreateTopics
// returns (the broker's metadata image lags the controller): wait here instead.
async function createTopic (topic, numPartitions = 1) {
  const created = await admin.createTopics({
    topics: [{ topic, numPartitions }], waitForLeaders: false, timeout: 10000,
  })
  check(created, 'createTopics says ' + topic + ' already existed')
  await waitFor(`${topic} to have ${numPartitions} partitions with leaders`, async () => {
    try {
      const md = await admin.fetchTopicMetadata({ topics: [topic] })
      const ps = md.topics[0].partitions
      return ps.length === numPartitions && ps.every(p => p.leader >= 0)
    } catch (e) {
      if (e.type === 'UNKNOWN_TOPIC_OR_PARTITION' || e.type === 'LEADER_NOT_AVAILABLE') return false
      throw e
    }
  }, 20000, 100)
}

async function producer (opts = {}) {
  const p = kafka.producer({ allowAutoTopicCreation: false, ...opts })
  cleanups.push(() => p.disconnect())
  await p.connect()
  return p
}

function consumer (groupId, opts = {}) {
  const c = kafka.consumer({
    groupId,
    sessionTimeout: 10000,
    rebalanceTimeout: 20000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 250,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    ...opts,
  })
  cleanups.push(() => c.disconnect())
  return c
}

// Reads n messages of topic with a fresh group; waits a little longer to see no extra ones.
async function collect (topic, n, { fromBeginning = true, timeout = 30000, readUncommitted = false } = {}) {
  const c = consumer(groupName('reader-' + topic + '-' + crypto.randomBytes(2).toString('hex')), { readUncommitted })
  const got = []
  await c.connect()
  await c.subscribe({ topics: [topic], fromBeginning })
  await c.run({ eachMessage: async ({ partition, message }) => { got.push({ partition, ...message }) } })
  try {
    await waitFor(`${n} messages from ${topic} (have ${got.length})`, () => got.length >= n, timeout)
    await sleep(500)
  } finally {
    await c.disconnect()
  }
  return got
}

function str (buf) { return buf === null || buf === undefined ? buf : buf.toString() }

async function produceBatches (p, topic, values, { batch = 10, acks = -1, compression } = {}) {
  const reports = []
  for (let i = 0; i < values.length; i += batch) {
    const messages = values.slice(i, i + batch).map(value => ({ value }))
    reports.push(await p.send({ topic, acks, compression, messages }))
  }
  return reports
}

// The records came back exactly once, in order, at offsets 0..n-1.
function checkInOrder (got, values) {
  check(got.length === values.length, `read ${got.length} records, produced ${values.length}`)
  got.forEach((m, i) => {
    check(str(m.value) === values[i], `record ${i} is ${str(m.value)}, produced ${values[i]}`)
    check(m.offset === String(i), `record ${i} at offset ${m.offset}`)
  })
}

async function lowHigh (topic, partition = 0) {
  const offsets = await admin.fetchTopicOffsets(topic)
  const p = offsets.find(o => o.partition === partition)
  return [p.low, p.high]
}

// -- scenarios -----------------------------------------------------------------
const N = 50
const scenarios = {}

scenarios.metadata = async () => {
  const topic = topicName('metadata')
  await createTopic(topic, 2)
  const cluster = await admin.describeCluster()
  const listed = Object.fromEntries(cluster.brokers.map(x => [x.nodeId, `${x.host}:${x.port}`]))
  check(JSON.stringify(listed) === JSON.stringify(expectedBrokers),
    'brokers ' + JSON.stringify(cluster.brokers) + ', want ' + JSON.stringify(expectedBrokers))
  const md = await admin.fetchTopicMetadata({ topics: [topic] })
  const t = md.topics.find(x => x.name === topic)
  check(t && t.partitions.length === 2, 'topic metadata ' + JSON.stringify(md.topics))
  const n = Object.keys(expectedBrokers).length
  for (const p of t.partitions) {
    check(expectedBrokers[p.leader] && p.replicas.length === n && p.partitionErrorCode === 0,
      'partition ' + JSON.stringify(p))
  }
  return `describeCluster: nodes ${Object.keys(listed)}, controller ${cluster.controller}; ` +
    `fetchTopicMetadata: ${topic} with partitions 0,1, ${n} replicas each`
}

scenarios.create_delete_topics = async () => {
  const topic = topicName('create-delete')
  await createTopic(topic, 3)
  const md = await admin.fetchTopicMetadata({ topics: [topic] })
  check(md.topics[0].partitions.length === 3, 'created with ' + md.topics[0].partitions.length + ' partitions')
  check((await admin.listTopics()).includes(topic), 'listTopics lacks the new topic')
  await admin.deleteTopics({ topics: [topic], timeout: 10000 })
  await waitFor('deleted topic to leave listTopics', async () => !(await admin.listTopics()).includes(topic))
  return 'createTopics (3 partitions) seen in fetchTopicMetadata and listTopics; deleteTopics; gone from listTopics'
}

function acksScenario (acks, label) {
  return async () => {
    const topic = topicName('acks' + label)
    await createTopic(topic)
    const values = range(N).map(i => `acks${label} record ${i}`)
    const p = await producer()
    const reports = await produceBatches(p, topic, values, { acks })
    await p.disconnect()
    if (acks !== 0) {
      reports.forEach((r, b) => {
        check(r.length === 1 && r[0].errorCode === 0 && r[0].partition === 0 &&
              r[0].baseOffset === String(b * 10), `batch ${b} report ${JSON.stringify(r)}`)
      })
    }
    checkInOrder(await collect(topic, N), values)
    return `${N} records in 5 sends with acks=${acks}` +
      (acks !== 0 ? ', each send reported baseOffset 0,10,..,40 with errorCode 0' : ' (no reports at acks=0)') +
      `; consumed back in order at offsets 0..${N - 1}`
  }
}
scenarios.produce_acks0 = acksScenario(0, '0')
scenarios.produce_acks1 = acksScenario(1, '1')
scenarios.produce_acksall = acksScenario(-1, 'all')

scenarios.keys_headers_timestamps = async () => {
  const topic = topicName('kht')
  await createTopic(topic)
  const base = Date.now() - 3600 * 1000 // an hour back: clearly not the broker's clock
  const sent = [
    { key: 'k1', value: 'v0', headers: { h1: 'a' }, timestamp: String(base + 1) },
    { key: 'k2', value: 'v1', headers: { h1: 'b', rep: ['x', 'y', 'z'] }, timestamp: String(base + 2) },
    { key: 'k1', value: null, headers: { tomb: 'stone' }, timestamp: String(base + 3) },
    { key: null, value: 'v3', timestamp: String(base + 4) },
    { key: Buffer.from([0, 255, 1]), value: Buffer.from([7, 0, 7]), headers: { bin: Buffer.from([0, 1]) }, timestamp: String(base + 5) },
  ]
  const p = await producer()
  await p.send({ topic, acks: -1, messages: sent })
  await p.disconnect()
  const got = await collect(topic, sent.length)
  check(got.length === sent.length, `read ${got.length} of ${sent.length}`)
  const asBuf = v => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v))
  got.forEach((m, i) => {
    const s = sent[i]
    const eq = (a, b) => (a === null ? b === null : b !== null && a.equals(b))
    check(eq(asBuf(s.key), m.key), `record ${i} key ${m.key}`)
    check(eq(asBuf(s.value), m.value), `record ${i} value ${m.value}`)
    check(m.timestamp === s.timestamp, `record ${i} timestamp ${m.timestamp}, sent ${s.timestamp}`)
    check(m.batchContext.timestampType === 0, `record ${i} timestampType ${m.batchContext.timestampType}`)
    const want = Object.entries(s.headers || {}).map(([k, v]) => [k, Array.isArray(v) ? v.map(asBuf) : asBuf(v)])
    const have = Object.entries(m.headers || {})
    check(have.length === want.length, `record ${i} headers ${JSON.stringify(m.headers)}`)
    for (const [k, v] of want) {
      const h = m.headers[k]
      if (Array.isArray(v)) {
        check(Array.isArray(h) && h.length === v.length && v.every((x, j) => x.equals(h[j])),
          `record ${i} repeated header ${k}: ${JSON.stringify(h)}`)
      } else {
        check(Buffer.isBuffer(h) && h.equals(v), `record ${i} header ${k}: ${h}`)
      }
    }
  })
  return '5 records: string and binary keys, a repeated key, a null key; a null value; headers incl. ' +
    'one key repeated 3 times (order kept) and a binary value; explicit CreateTime timestamps — all exact'
}

function codecScenario (name, type) {
  return async () => {
    if (codecMissing[name]) return { unsupported: codecMissing[name] }
    const topic = topicName('codec-' + name)
    await createTopic(topic)
    const values = range(N).map(i => `${name} record ${i} ` + 'compressible '.repeat(i % 9 + 1))
    const before = { ...codecUse[name] }
    const p = await producer()
    await produceBatches(p, topic, values, { compression: type })
    await p.disconnect()
    const got = await collect(topic, N)
    checkInOrder(got, values)
    const c = codecUse[name].compress - before.compress
    const d = codecUse[name].decompress - before.decompress
    check(c >= 5, `${name} codec compressed ${c} batches, expected 5`)
    check(d >= 1, `no fetched batch needed ${name} decompression`)
    return `${N} records in 5 ${name} batches (codec compressed ${c}, decompressed ${d} fetched batches); ` +
      'consumed back exactly, in order' + (name === 'gzip' ? '' : name === 'snappy'
      ? ' (kafkajs-snappy 1.1.0 plugin)' : ' (kafkajs-lz4 1.2.1 plugin)')
  }
}
scenarios.compression_gzip = codecScenario('gzip', CompressionTypes.GZIP)
scenarios.compression_snappy = codecScenario('snappy', CompressionTypes.Snappy)
scenarios.compression_lz4 = codecScenario('lz4', CompressionTypes.LZ4)
scenarios.compression_zstd = codecScenario('zstd', CompressionTypes.ZSTD)

scenarios.idempotent_produce = async () => {
  const topic = topicName('idempotent')
  await createTopic(topic)
  const values = range(N).map(i => `idempotent record ${i}`)
  const p = await producer({ idempotent: true, maxInFlightRequests: 1 })
  const reports = await produceBatches(p, topic, values, { acks: -1 })
  await p.disconnect()
  reports.forEach((r, b) => check(r[0].errorCode === 0 && r[0].baseOffset === String(b * 10),
    `batch ${b} report ${JSON.stringify(r)}`))
  const got = await collect(topic, N)
  checkInOrder(got, values)
  const pids = new Set(got.map(m => m.batchContext.producerId))
  check(pids.size === 1 && !pids.has('-1'), 'producer ids on the batches: ' + [...pids])
  const seqs = [...new Set(got.map(m => m.batchContext.firstSequence))].sort((a, b) => a - b)
  check(seqs.join() === '0,10,20,30,40', 'batch first sequences ' + seqs)
  const [low, high] = await lowHigh(topic)
  check(low === '0' && high === String(N), `watermarks ${low}..${high}`)
  return `idempotent producer: ${N} records once and in order, all batches carry producer id ${[...pids][0]} ` +
    `with sequences ${seqs}; high watermark ${high}`
}

// -- transactions --------------------------------------------------------------
function txnProducer (transactionalId) {
  // What kafkajs asks of a transactional producer.
  return producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 30000 })
}

// The values each partition holds, in offset order.
function byPartition (msgs, partitions) {
  const out = range(partitions).map(() => [])
  for (const m of msgs.slice().sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset))) {
    out[m.partition].push(str(m.value))
  }
  return out
}

const onPartition = (values, partitions, p) => values.filter((_, i) => i % partitions === p)
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)

// The fencing error: kafkajs 2.2.4 knows INVALID_PRODUCER_EPOCH (47) but not
// PRODUCER_FENCED (90), which it turns into "Unknown error code 90".
function fencedName (e) {
  for (let x = e; x; x = x.originalError || x.cause) {
    if (x.type === 'INVALID_PRODUCER_EPOCH') return `${x.name} INVALID_PRODUCER_EPOCH`
    if (x.type === 'PRODUCER_FENCED' || /Unknown error code 90\b/.test(x.message)) {
      return `${x.name} "${x.message}" (PRODUCER_FENCED)`
    }
  }
  return null
}

scenarios.transactions = async () => {
  const topic = topicName('txn')
  const txnId = topicName('txn-id')
  await createTopic(topic, 2)
  const tagged = (tag, n) => range(n).map(i => `${tag}-${i}`)
  const first = tagged('commit1', 10)
  const aborted = tagged('abort', 6)
  const second = tagged('commit2', 8)
  const p = await txnProducer(txnId)
  for (const [values, commit] of [[first, true], [aborted, false], [second, true]]) {
    const txn = await p.transaction() // the first call sends InitProducerId
    // send resolves once acknowledged: the aborted records are in the log before the abort.
    await txn.send({ topic, acks: -1, messages: values.map((value, i) => ({ value, partition: i % 2 })) })
    await (commit ? txn.commit() : txn.abort())
  }
  const committed = byPartition(await collect(topic, first.length + second.length), 2)
  const all = byPartition(await collect(topic, first.length + aborted.length + second.length, { readUncommitted: true }), 2)
  const offsets = await admin.fetchTopicOffsets(topic)
  for (const part of [0, 1]) {
    const want = [...onPartition(first, 2, part), ...onPartition(second, 2, part)]
    check(same(committed[part], want), `read_committed partition ${part}: ${committed[part].length} values, want ${want.length}`)
    const wantAll = [...onPartition(first, 2, part), ...onPartition(aborted, 2, part), ...onPartition(second, 2, part)]
    check(same(all[part], wantAll), `read_uncommitted partition ${part}: ${all[part].length} values, want ${wantAll.length}`)
    const high = offsets.find(o => o.partition === part).high
    check(high === String(wantAll.length + 3), `partition ${part} end offset ${high}, want ${wantAll.length} records + 3 markers`)
  }

  // A second producer with the same transactional id fences the first.
  const p2 = await txnProducer(txnId)
  const txn2 = await p2.transaction() // InitProducerId, then begin
  let error = null
  try {
    const txn = await p.transaction()
    await txn.send({ topic, acks: -1, messages: [{ value: 'fenced', partition: 0 }] })
    await txn.commit()
  } catch (e) {
    error = e
  }
  check(error, "the fenced producer's transaction committed")
  const fenced = fencedName(error)
  check(fenced, 'fenced producer failed with ' + (error.stack || error))
  await txn2.send({ topic, acks: -1, messages: [{ value: 'after-fence', partition: 0 }] })
  await txn2.commit()
  await p.disconnect()
  await p2.disconnect()
  return 'commit 10, abort 6, commit 8 on 2 partitions: read_committed 18, read_uncommitted 24, end offsets ' +
    `+3 markers each; the same transactional id fenced the first (${fenced}); the second committed`
}

scenarios.transactions_offsets = async () => {
  const src = topicName('txo-in')
  const dst = topicName('txo-out')
  const group = groupName('txo')
  await createTopic(src)
  await createTopic(dst)
  const n = 10
  const firstTxn = 6
  const inputs = range(n).map(i => `txo ${i}`)
  const plain = await producer()
  await produceBatches(plain, src, inputs)
  await plain.disconnect()
  const c = consumer(group) // kafkajs consumers read committed by default
  const got = []
  await c.connect()
  await c.subscribe({ topics: [src], fromBeginning: true })
  await c.run({ autoCommit: false, eachMessage: async ({ message }) => { got.push(message) } })
  const p = await txnProducer(topicName('txo-id'))
  try {
    await waitFor('the group consumer to read 10', () => got.length >= n)
    check(same(got.map(m => str(m.value)), inputs), 'input read by the group consumer: ' + got.map(m => str(m.value)))
    for (const [msgs, commit] of [[got.slice(0, firstTxn), true], [got.slice(firstTxn), false]]) {
      const txn = await p.transaction()
      await txn.send({ topic: dst, acks: -1, messages: msgs.map(m => ({ value: 'out-' + str(m.value), partition: 0 })) })
      // kafkajs' sendOffsets takes the group id, not the consumer's generation and member.
      const next = String(Number(msgs[msgs.length - 1].offset) + 1)
      await txn.sendOffsets({ consumerGroupId: group, topics: [{ topic: src, partitions: [{ partition: 0, offset: next }] }] })
      await (commit ? txn.commit() : txn.abort())
    }
    const [fetched] = await admin.fetchOffsets({ groupId: group, topics: [src] })
    const at = fetched.partitions.find(x => x.partition === 0).offset
    check(at === String(firstTxn), `group's committed offset ${at} after the aborted transaction, want ${firstTxn}`)
  } finally {
    await c.disconnect()
    await p.disconnect()
  }
  const outputs = inputs.map(v => 'out-' + v)
  const committed = byPartition(await collect(dst, firstTxn), 1)[0]
  check(same(committed, outputs.slice(0, firstTxn)), 'output read_committed: ' + committed)
  const all = byPartition(await collect(dst, n, { readUncommitted: true }), 1)[0]
  check(same(all, outputs), 'output read_uncommitted: ' + all)
  return 'group consumer read 10; txn 1 wrote 6 outputs + offset 6 (sendOffsets with the group id), committed; ' +
    'txn 2 wrote 4 + offset 10, aborted: fetchOffsets = 6, output read_committed 6, read_uncommitted 10'
}

scenarios.consume_earliest = async () => {
  const topic = topicName('earliest')
  await createTopic(topic)
  const values = range(10).map(i => `earliest ${i}`)
  const p = await producer()
  await produceBatches(p, topic, values)
  await p.disconnect()
  checkInOrder(await collect(topic, 10, { fromBeginning: true }), values)
  return 'a new group with fromBeginning=true (auto.offset.reset earliest) read offsets 0..9 produced before it joined'
}

scenarios.consume_latest = async () => {
  const topic = topicName('latest')
  await createTopic(topic)
  const p = await producer()
  await produceBatches(p, topic, range(5).map(i => `old ${i}`))
  const c = consumer(groupName('latest'))
  const got = []
  let fetched = false
  c.on(c.events.FETCH, () => { fetched = true })
  await c.connect()
  await c.subscribe({ topics: [topic], fromBeginning: false })
  await c.run({ eachMessage: async ({ message }) => { got.push(message) } })
  try {
    // Once a fetch completed, the consumer has resolved "latest" (offset 5).
    await waitFor('the latest consumer to fetch', () => fetched)
    const fresh = range(5).map(i => `new ${i}`)
    await produceBatches(p, topic, fresh)
    await waitFor('5 new records', () => got.length >= 5)
    await sleep(500)
    check(got.length === 5, `read ${got.length} records: ${got.map(m => str(m.value))}`)
    got.forEach((m, i) => check(str(m.value) === fresh[i] && m.offset === String(5 + i),
      `record ${i}: ${str(m.value)} at ${m.offset}`))
  } finally {
    await c.disconnect()
    await p.disconnect()
  }
  return 'fromBeginning=false (latest) consumer skipped the 5 earlier records and read exactly the 5 produced after it was positioned (offsets 5..9)'
}

scenarios.consume_timestamp = async () => {
  const topic = topicName('timestamp')
  await createTopic(topic)
  const base = Date.now() - 3600 * 1000
  const p = await producer()
  await p.send({ topic, acks: -1, messages: range(10).map(i => ({ value: `ts ${i}`, timestamp: String(base + i * 1000) })) })
  await p.disconnect()
  const offsets = await admin.fetchTopicOffsetsByTimestamp(topic, base + 5000)
  check(offsets.length === 1 && offsets[0].offset === '5', 'offsets for time ' + JSON.stringify(offsets))
  const between = await admin.fetchTopicOffsetsByTimestamp(topic, base + 6500)
  check(between[0].offset === '7', 'offset for a time between records ' + JSON.stringify(between))
  const c = consumer(groupName('timestamp'))
  const got = []
  await c.connect()
  // Positioned at the end (latest) first, so every record it delivers comes from the seek.
  await c.subscribe({ topics: [topic], fromBeginning: false })
  await c.run({ eachMessage: async ({ message }) => { got.push(message) } })
  try {
    c.seek({ topic, partition: 0, offset: offsets[0].offset })
    await waitFor('records after the seek', () => got.some(m => m.offset === '9'))
    await sleep(300)
    check(got.length === 5 && got.every((m, i) => m.offset === String(5 + i) &&
      m.timestamp === String(base + (5 + i) * 1000)), 'after seek: ' + got.map(m => m.offset))
  } finally {
    await c.disconnect()
  }
  return 'fetchTopicOffsetsByTimestamp: exact time -> offset 5, time between records -> next offset 7; seek to 5 read records 5..9 with the right timestamps'
}

scenarios.group_of_three = async () => {
  const topic = topicName('group3')
  const group = groupName('group3')
  await createTopic(topic, 6)
  const members = range(3).map(i => ({ c: consumer(group), assignment: null, memberId: null, got: [] }))
  const seen = new Map() // value -> times consumed
  for (const m of members) {
    m.c.on(m.c.events.GROUP_JOIN, e => {
      m.assignment = (e.payload.memberAssignment[topic] || []).slice().sort()
      m.memberId = e.payload.memberId
    })
    await m.c.connect()
    await m.c.subscribe({ topics: [topic], fromBeginning: true })
    await m.c.run({
      eachMessage: async ({ partition, message }) => {
        m.got.push(partition)
        seen.set(str(message.value), (seen.get(str(message.value)) || 0) + 1)
      },
    })
  }
  const covers = live => {
    const all = live.flatMap(m => m.assignment || [])
    return live.every(m => m.assignment && m.assignment.length > 0) &&
      new Set(all).size === all.length && all.length === 6
  }
  const p = await producer()
  try {
    await waitFor('three members with disjoint assignments covering 6 partitions', () => covers(members), 45000)
    const first = members.map(m => m.assignment.join(''))
    const batch1 = range(60).map(i => `g3 ${i}`)
    await p.send({ topic, acks: -1, messages: batch1.map((value, i) => ({ value, partition: i % 6 })) })
    await waitFor('all 60 records consumed', () => batch1.every(v => seen.has(v)), 30000)
    await waitFor('commits covering all 60 records', async () => {
      const [o] = await admin.fetchOffsets({ groupId: group, topics: [topic] })
      return o.partitions.reduce((s, x) => s + Math.max(0, Number(x.offset)), 0) === 60
    }, 20000, 500)
    await members[2].c.disconnect() // leaves the group
    const live = members.slice(0, 2)
    await waitFor('the two remaining members to take over all 6 partitions', () => covers(live), 45000)
    const batch2 = range(30).map(i => `g3 second ${i}`)
    await p.send({ topic, acks: -1, messages: batch2.map((value, i) => ({ value, partition: i % 6 })) })
    await waitFor('all 30 later records consumed', () => batch2.every(v => seen.has(v)), 30000)
    const dupes = [...seen.values()].filter(n => n > 1).length
    return `3 members: assignments ${first.join('/')} (disjoint, all 6); 60 records consumed and committed ` +
      `(fetchOffsets sums to 60); one left, the other two rebalanced to ${live.map(m => m.assignment.join('')).join('/')} ` +
      `and consumed the next 30; ${dupes} redelivered`
  } finally {
    await p.disconnect()
    for (const m of members) await m.c.disconnect()
  }
}

scenarios.offsets_resume = async () => {
  const topic = topicName('resume')
  const group = groupName('resume')
  await createTopic(topic)
  const values = range(10).map(i => `resume ${i}`)
  const p = await producer()
  await produceBatches(p, topic, values)
  await p.disconnect()
  const a = consumer(group)
  const gotA = []
  await a.connect()
  await a.subscribe({ topics: [topic], fromBeginning: true })
  await a.run({ autoCommit: false, eachMessage: async ({ message }) => { gotA.push(message) } })
  try {
    await waitFor('first consumer to read 10', () => gotA.length >= 10)
    await a.commitOffsets([{ topic, partition: 0, offset: '6' }])
  } finally {
    await a.disconnect()
  }
  const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] })
  check(committed.partitions[0].offset === '6', 'committed ' + JSON.stringify(committed))
  const b = consumer(group)
  const gotB = []
  await b.connect()
  await b.subscribe({ topics: [topic], fromBeginning: true })
  await b.run({ eachMessage: async ({ message }) => { gotB.push(message) } })
  try {
    await waitFor('second consumer to read 4', () => gotB.length >= 4)
    await sleep(500)
  } finally {
    await b.disconnect()
  }
  check(gotB.length === 4 && gotB.every((m, i) => m.offset === String(6 + i) && str(m.value) === values[6 + i]),
    'resumed at ' + gotB.map(m => m.offset))
  return 'consumer committed offset 6 and closed; a new consumer in the group (fromBeginning=true) resumed at 6 and read 6..9 only'
}

scenarios.admin_configs = async () => {
  const topic = topicName('configs')
  await createTopic(topic)
  const describe = async () => {
    const r = await admin.describeConfigs({
      includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    })
    const entries = r.resources[0].configEntries
    return name => entries.find(e => e.configName === name)
  }
  const before = (await describe())('retention.ms')
  check(before && before.configValue === '604800000' && before.isDefault, 'retention.ms before ' + JSON.stringify(before))
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
  })
  // kafkajs may ask another broker than the one that altered it; in a
  // cluster (Kafka's KRaft or Runnel's etcd) that broker learns the change
  // a moment later: bounded polling.
  let after
  await waitFor('describeConfigs to show retention.ms 3600000', async () => {
    after = (await describe())('retention.ms')
    return after && after.configValue === '3600000'
  }, 15000)
  check(after && after.configValue === '3600000' && !after.isDefault, 'retention.ms after ' + JSON.stringify(after))
  return 'describeConfigs: retention.ms 604800000 (default); alterConfigs (kafkajs 2.2.4 has no incremental ' +
    'variant) set 3600000; describeConfigs shows 3600000, not default'
}

scenarios.admin_grow_partitions = async () => {
  const topic = topicName('grow')
  await createTopic(topic, 1)
  await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }], timeout: 10000 })
  await waitFor('metadata to show 3 partitions', async () => {
    const md = await admin.fetchTopicMetadata({ topics: [topic] })
    return md.topics[0].partitions.length === 3
  })
  return 'createPartitions grew the topic from 1 to 3; fetchTopicMetadata shows 3'
}

scenarios.admin_groups = async () => {
  const topic = topicName('groups')
  const group = groupName('groups')
  await createTopic(topic)
  const c = consumer(group)
  let memberId = null
  c.on(c.events.GROUP_JOIN, e => { memberId = e.payload.memberId })
  await c.connect()
  await c.subscribe({ topics: [topic], fromBeginning: true })
  await c.run({ eachMessage: async () => {} })
  try {
    await waitFor('the consumer to join', () => memberId)
    const listed = await admin.listGroups()
    const mine = listed.groups.find(g => g.groupId === group)
    check(mine && mine.protocolType === 'consumer', 'listGroups ' + JSON.stringify(listed.groups))
    const d = await waitFor('describeGroups to say Stable', async () => {
      const r = await admin.describeGroups([group])
      return r.groups[0].state === 'Stable' ? r.groups[0] : null
    })
    check(d.protocolType === 'consumer' && d.members.length === 1 && d.members[0].memberId === memberId,
      'describeGroups ' + JSON.stringify({ ...d, members: d.members.map(m => m.memberId) }))
    const assignment = AssignerProtocol.MemberAssignment.decode(d.members[0].memberAssignment)
    check(JSON.stringify(assignment.assignment) === JSON.stringify({ [topic]: [0] }),
      'member assignment ' + JSON.stringify(assignment))
    return `listGroups has the group (protocolType consumer); describeGroups: Stable, protocol ${d.protocol}, ` +
      `1 member (the running consumer's id, client ${d.members[0].clientId}) assigned ${topic}[0]`
  } finally {
    await c.disconnect()
  }
}

scenarios.admin_delete_records = async () => {
  const topic = topicName('delete-records')
  await createTopic(topic)
  const values = range(10).map(i => `dr ${i}`)
  const p = await producer()
  await produceBatches(p, topic, values)
  await p.disconnect()
  // deleteTopicRecords finds the leader in the admin's cached metadata only: load the topic first.
  await admin.fetchTopicMetadata({ topics: [topic] })
  try {
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '4' }] })
  } catch (e) {
    throw new Error(e.message + ' ' + JSON.stringify(e.partitions || []))
  }
  const [low, high] = await lowHigh(topic)
  check(low === '4' && high === '10', `after deleteTopicRecords: low ${low} high ${high}`)
  const got = await collect(topic, 6)
  check(got.length === 6 && got[0].offset === '4', 'earliest consumer read from ' + (got[0] || {}).offset)
  return 'deleteTopicRecords before offset 4: fetchTopicOffsets low 4 high 10; an earliest consumer starts at 4'
}

// The leader killed while producing and consuming (cluster only): one
// partition on every broker; an idempotent acks=all producer sends a record
// every 5 ms (each send awaited: kafkajs' idempotent producer allows one
// request in flight) while a group consumer reads; after 100
// acknowledgements the harness kills the leader. Producing goes on until a
// new leader is named and 100 more are acknowledged; then every record sent
// must have been acknowledged, and the log read must hold each once, in order,
// at its acknowledged offset. kafkajs has no assign(): its consumer is a
// group member, which may be handed an uncommitted record again when its
// coordinator moves, so what it read is taken by offset.
scenarios.leader_failover = async () => {
  const ids = Object.keys(expectedBrokers).map(Number)
  if (ids.length < 2) return { unsupported: 'needs a cluster: the harness runs it with run_matrix.py --cluster' }
  const topic = topicName('leader-failover')
  await createTopic(topic)
  const partition0 = async () => {
    const md = await admin.fetchTopicMetadata({ topics: [topic] })
    return md.topics[0].partitions.find(p => p.partitionId === 0)
  }
  await waitFor(`${topic}'s full ISR`, async () => (await partition0()).isr.length === ids.length, 30000, 200)
  const old = (await partition0()).leader
  // The client's default retry budget (5 retries, about 3 s) is about what a
  // failover takes: give the sends 30 retries (about 25 s) to find the new leader.
  const p = await producer({
    idempotent: true, maxInFlightRequests: 1, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
  })
  const byOffset = new Map()
  let deliveries = 0
  const c = consumer(groupName('failover'))
  await c.connect()
  await c.subscribe({ topics: [topic], fromBeginning: true })
  await c.run({
    eachMessage: async ({ message }) => { deliveries++; byOffset.set(message.offset, str(message.value)) },
  })
  const sent = []
  const acked = []
  const step = async () => {
    const value = `${topic}-${String(sent.length).padStart(6, '0')}`
    sent.push(value)
    const [r] = await p.send({ topic, acks: -1, messages: [{ value, partition: 0 }] })
    check(r.errorCode === 0, 'send report ' + JSON.stringify(r))
    acked.push(r.baseOffset)
    await sleep(5)
  }
  let deadline = Date.now() + 20000
  while (acked.length < 100) {
    check(Date.now() < deadline, `${acked.length} of 100 acknowledged before the kill`)
    await step()
  }
  process.stdout.write(JSON.stringify({ event: 'kill_leader', scenario: 'leader_failover', topic, partition: 0 }) + '\n')
  const killed = Date.now()
  let newLeader = null
  let atChange = null
  let checked = 0
  while (atChange === null || acked.length < atChange + 100) {
    check(Date.now() < killed + 60000, `60 s after the kill: new leader ${newLeader}, ${acked.length} acknowledged`)
    await step()
    if (newLeader === null && Date.now() - checked > 250) {
      checked = Date.now()
      try {
        const leader = (await partition0()).leader
        if (leader !== old && leader >= 0) { newLeader = leader; atChange = acked.length }
      } catch (e) { /* asked the dead broker: ask again */ }
    }
  }
  await p.disconnect()
  deadline = Date.now() + 30000
  while (byOffset.size < sent.length && Date.now() < deadline) await sleep(100)
  await sleep(500)
  await c.disconnect()
  const offsets = [...byOffset.keys()].map(Number).sort((a, b) => a - b)
  check(offsets.length === sent.length, `read ${offsets.length} distinct offsets, sent ${sent.length}`)
  offsets.forEach((o, i) => {
    check(String(o) === acked[i], `record ${i} acknowledged at ${acked[i]}, read at ${o}`)
    check(byOffset.get(String(o)) === sent[i], `record ${i} at offset ${o} is ${byOffset.get(String(o))}, sent ${sent[i]}`)
  })
  return `${sent.length} records, leader ${old} killed, ${newLeader} took over: all acknowledged, each once in the ` +
    `log, in order (${deliveries - byOffset.size} redelivered to the group consumer)`
}

// -- the security columns ----------------------------------------------------------
// kafkajs' ssl option is node's tls.connect options (it sets servername to the
// broker's host, 127.0.0.1, which the certificate names); its sasl option
// speaks PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 itself.
function securityOptions (col) {
  const o = {}
  if (col.security_protocol.endsWith('SSL')) {
    o.ssl = { ca: [fs.readFileSync(col.ca_pem)], rejectUnauthorized: true }
    if (col.client_cert_pem) {
      o.ssl.cert = fs.readFileSync(col.client_cert_pem)
      o.ssl.key = fs.readFileSync(col.client_key_pem)
    }
  }
  if (col.sasl_mechanism) {
    o.sasl = { mechanism: col.sasl_mechanism.toLowerCase(), username: col.sasl_username, password: col.sasl_password }
  }
  return o
}

const SECURE_N = 20 // records per partition

// Over the column's listener only: createTopics (2 partitions) seen in metadata,
// the broker advertised on this listener; acks=-1 produce to both partitions; a
// group consumer reads every record exactly and commits; the admin fetches the
// committed offsets and lists the group.
async function securityRoundTrip (id, col) {
  const topic = topicName(id.replace(/_/g, '-'))
  const group = groupName(id.replace(/_/g, '-') + '-group')
  await createTopic(topic, 2)
  const port = Number(col.bootstrap.split(':')[1])
  const cluster = await admin.describeCluster()
  check(cluster.brokers.every(b => b.port === port), 'brokers ' + JSON.stringify(cluster.brokers) + ', want port ' + port)
  const sent = [0, 1].map(p => range(SECURE_N).map(i => `${id}-p${p}-${i}`))
  const p = await producer()
  for (const part of [0, 1]) {
    const [r] = await p.send({ topic, acks: -1, messages: sent[part].map(value => ({ value, partition: part })) })
    check(r.errorCode === 0 && r.baseOffset === '0', 'send report ' + JSON.stringify(r))
  }
  await p.disconnect()
  const got = [[], []]
  const c = consumer(group)
  await c.connect()
  await c.subscribe({ topics: [topic], fromBeginning: true })
  await c.run({ eachMessage: async ({ partition, message }) => { got[partition].push(str(message.value)) } })
  const committed = async () => {
    const [t] = await admin.fetchOffsets({ groupId: group, topics: [topic] })
    return t.partitions.map(x => x.offset).sort().join('+')
  }
  try {
    await waitFor(`${2 * SECURE_N} messages (have ${got[0].length}+${got[1].length})`,
      () => got[0].length + got[1].length >= 2 * SECURE_N, 30000)
    await waitFor('committed offsets ' + SECURE_N + ' on both partitions', async () =>
      (await committed()) === `${SECURE_N}+${SECURE_N}`, 20000)
    const groups = (await admin.listGroups()).groups.map(g => g.groupId)
    check(groups.includes(group), 'group ' + group + ' not listed')
  } finally {
    await c.disconnect()
  }
  check(JSON.stringify(got) === JSON.stringify(sent), 'consumed ' + got.map(x => x.length).join('+') + ' records, ' +
    'not exactly those produced')
  return `${col.listener}: ${2 * SECURE_N} records over ${col.security_protocol}, committed ${SECURE_N}+${SECURE_N}, ` +
    'group listed'
}

async function runColumns () {
  for (const [id, col] of Object.entries(columns)) {
    const t0 = Date.now()
    kafka = newKafka([col.bootstrap], securityOptions(col))
    admin = kafka.admin()
    try {
      await withTimeout(admin.connect(), 20000, 'admin connect')
      emit(id, 'pass', await withTimeout(securityRoundTrip(id, col), 60000, id))
    } catch (e) {
      emit(id, 'fail', (e && e.message) || String(e))
      log(id, 'failed:', (e && e.stack) || e)
    }
    for (const close of cleanups.splice(0)) {
      try { await withTimeout(close(), 10000, 'disconnect') } catch (e) { log('cleanup:', e.message) }
    }
    await withTimeout(admin.disconnect(), 10000, 'admin disconnect').catch(e => log(e.message))
    log(id, 'took', Date.now() - t0, 'ms')
  }
}

// -- main ------------------------------------------------------------------------
const LIMIT = { group_of_three: 120000, leader_failover: 90000 }

async function main () {
  const started = Date.now()
  if (columns) return runColumns()
  admin = kafka.admin()
  try {
    await withTimeout(admin.connect(), 20000, 'admin connect')
  } catch (e) {
    for (const s of ORDER) emit(s, 'fail', 'admin client could not connect: ' + e.message)
    return
  }
  // run_matrix.py --only (debugging)
  const only = process.env.MATRIX_ONLY ? process.env.MATRIX_ONLY.split(',') : null
  for (const s of ORDER.filter(x => !only || only.includes(x))) {
    const t0 = Date.now()
    try {
      const r = await withTimeout(scenarios[s](), LIMIT[s] || 60000, s)
      if (r && r.unsupported) emit(s, 'unsupported', r.unsupported)
      else emit(s, 'pass', r)
    } catch (e) {
      emit(s, 'fail', (e && e.message) || String(e))
      log(s, 'failed:', (e && e.stack) || e)
    }
    // A failed or timed-out scenario may leave clients connected: close them before the next.
    for (const close of cleanups.splice(0)) {
      try { await withTimeout(close(), 10000, 'disconnect') } catch (e) { log('cleanup:', e.message) }
    }
    log(s, 'took', Date.now() - t0, 'ms')
  }
  await withTimeout(admin.disconnect(), 10000, 'admin disconnect').catch(e => log(e.message))
  log('done in', Date.now() - started, 'ms')
}

main().then(() => process.exit(0), e => { log('driver crashed:', e.stack); process.exit(1) })
