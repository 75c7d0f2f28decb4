package runnel.matrix;

import static runnel.matrix.Kit.check;
import static runnel.matrix.Kit.checkEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;

/** Consumer groups: a rebalancing group of three, resumed offsets, the admin view of a group. */
final class GroupScenarios {
    private GroupScenarios() {}

    /** One group member polling on its own thread, committing synchronously after each batch. */
    private static final class Member implements Runnable {
        final KafkaConsumer<String, String> consumer;
        final String topic;
        final Map<String, String> seen;  // "partition/offset" -> value, shared by all members
        final AtomicInteger duplicates;
        volatile Set<TopicPartition> assigned = Set.of();
        volatile boolean stop;
        volatile Throwable error;
        final Thread thread;

        Member(Kit kit, String group, String topic, Map<String, String> seen, AtomicInteger duplicates, int n) {
            this.consumer = new KafkaConsumer<>(kit.consumerProps(group, Map.of("client.id", "java-matrix-member-" + n)));
            this.topic = topic;
            this.seen = seen;
            this.duplicates = duplicates;
            this.thread = new Thread(this, "member-" + n);
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            try {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        assigned = Set.of();
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        assigned = Set.copyOf(partitions);
                    }
                });
                while (!stop) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<String, String> r : records) {
                        if (seen.put(r.partition() + "/" + r.offset(), r.value()) != null) duplicates.incrementAndGet();
                    }
                    if (!records.isEmpty()) consumer.commitSync(Kit.WAIT);
                }
            } catch (Throwable t) {
                error = t;
            } finally {
                consumer.close(Duration.ofSeconds(10));  // leaves the group
            }
        }
    }

    /** True when every member holds partitions, no two share one, and together they hold all `partitions`. */
    private static boolean balanced(List<Member> members, int partitions) {
        Set<TopicPartition> union = new HashSet<>();
        int total = 0;
        for (Member m : members) {
            Set<TopicPartition> a = m.assigned;
            if (a.isEmpty()) return false;
            total += a.size();
            union.addAll(a);
        }
        return total == partitions && union.size() == partitions;
    }

    private static String sizes(List<Member> members) {
        return members.stream().map(m -> String.valueOf(m.assigned.size())).collect(Collectors.joining("+"));
    }

    static String groupOfThree(Kit kit) throws Exception {
        String topic = kit.name("three");
        String group = kit.name("g-three");
        kit.createTopic(topic, 6);
        Map<String, String> seen = new ConcurrentHashMap<>();
        AtomicInteger duplicates = new AtomicInteger();
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) members.add(new Member(kit, group, topic, seen, duplicates, i));
        List<ProducerRecord<String, String>> first = new ArrayList<>();
        for (int i = 0; i < 30; i++) first.add(new ProducerRecord<>(topic, i % 6, null, "first" + i));
        kit.produce(first, Map.of(ProducerConfig.ACKS_CONFIG, "all"));
        try {
            members.forEach(m -> m.thread.start());
            Kit.waitFor(Duration.ofSeconds(60), "three members to share the 6 partitions", () -> balanced(members, 6));
            String threeWay = sizes(members);
            Kit.waitFor(Kit.WAIT, "the first 30 records", () -> seen.size() >= 30);
            // Every partition's commit reaches its end (5 records each).
            Kit.waitFor(Kit.WAIT, "commits at offset 5 on all 6 partitions", () -> {
                try {
                    Map<TopicPartition, OffsetAndMetadata> committed =
                            kit.admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                    return committed.size() == 6 && committed.values().stream().allMatch(o -> o != null && o.offset() == 5);
                } catch (Exception e) {
                    return false;
                }
            });

            Member leaving = members.remove(2);
            leaving.stop = true;
            leaving.thread.join(20_000);
            check(!leaving.thread.isAlive(), "the leaving member did not close within 20 s");
            Kit.waitFor(Duration.ofSeconds(60), "two members to take over the 6 partitions", () -> balanced(members, 6));
            String twoWay = sizes(members);

            List<ProducerRecord<String, String>> second = new ArrayList<>();
            for (int i = 0; i < 30; i++) second.add(new ProducerRecord<>(topic, i % 6, null, "second" + i));
            kit.produce(second, Map.of(ProducerConfig.ACKS_CONFIG, "all"));
            Kit.waitFor(Kit.WAIT, "all 60 records", () -> seen.size() >= 60);
            for (Member m : members) check(m.error == null, "member failed: " + (m.error == null ? "" : Kit.describe(m.error)));
            check(leaving.error == null, "leaving member failed: " + (leaving.error == null ? "" : Kit.describe(leaving.error)));
            Set<String> values = new HashSet<>(seen.values());
            for (int i = 0; i < 30; i++) {
                check(values.contains("first" + i), "first" + i + " not consumed");
                check(values.contains("second" + i), "second" + i + " not consumed");
            }
            checkEquals(60, seen.size(), "distinct records consumed");
            return "assignment " + threeWay + " of 6, commits at 5 each; after one left " + twoWay
                    + "; 60/60 records, " + duplicates.get() + " duplicates";
        } finally {
            for (Member m : members) m.stop = true;
            for (Member m : members) m.thread.join(20_000);
        }
    }

    static String offsetsResume(Kit kit) throws Exception {
        String topic = kit.name("resume");
        String group = kit.name("g-resume");
        kit.createTopic(topic, 1);
        kit.produceValues(topic, 10);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(group, Map.of()))) {
            c.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = Kit.pollUntil(c, 10, Kit.WAIT);
            checkEquals(10, got.size(), "records read by the first consumer");
            // Commit as if only v0..v5 were processed.
            c.commitSync(Map.of(tp, new OffsetAndMetadata(6, "resume-here")), Kit.WAIT);
        }
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(group, Map.of()))) {
            OffsetAndMetadata committed = c.committed(Set.of(tp), Kit.WAIT).get(tp);
            check(committed != null, "no committed offset seen by the second consumer");
            checkEquals(6L, committed.offset(), "committed offset");
            checkEquals("resume-here", committed.metadata(), "commit metadata");
            c.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = Kit.pollUntil(c, 4, Kit.WAIT);
            checkEquals(List.of("v6", "v7", "v8", "v9"), Kit.values(got), "values read after the restart");
        }
        return "committed 6 (with metadata) and closed; the next consumer resumed at v6";
    }

    static String adminGroups(Kit kit) throws Exception {
        String topic = kit.name("groups");
        String group = kit.name("g-admin");
        kit.createTopic(topic, 2);
        kit.produceValues(topic, 3);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(group,
                Map.of("client.id", "java-matrix-described")))) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Kit.WAIT.toNanos();
            while (c.assignment().size() < 2 && System.nanoTime() < deadline) c.poll(Duration.ofMillis(200));
            checkEquals(2, c.assignment().size(), "partitions assigned to the consumer");

            Collection<GroupListing> listed = Kit.get(kit.admin.listGroups().all());
            GroupListing mine = listed.stream().filter(g -> g.groupId().equals(group)).findFirst().orElse(null);
            check(mine != null, "group not in listGroups: " + listed);
            checkEquals("consumer", mine.protocol(), "listed protocol type");

            ConsumerGroupDescription d = Kit.get(kit.admin.describeConsumerGroups(List.of(group)).describedGroups().get(group));
            checkEquals(GroupState.STABLE, d.groupState(), "group state");
            checkEquals(1, d.members().size(), "members");
            MemberDescription m = d.members().iterator().next();
            checkEquals("java-matrix-described", m.clientId(), "member client id");
            checkEquals(Set.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)),
                    m.assignment().topicPartitions(), "member assignment");
            check(d.coordinator() != null && kit.brokers.containsKey(d.coordinator().id()), "coordinator: " + d.coordinator());
        }
        // Once the only member has left, the group is empty.
        Kit.waitFor(Kit.WAIT, "the group to be Empty after its member left", () -> {
            try {
                ConsumerGroupDescription d = kit.admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get();
                return d.groupState() == GroupState.EMPTY && d.members().isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        return "listed (protocol consumer); described Stable, 1 member with both partitions; Empty after it left";
    }
}
