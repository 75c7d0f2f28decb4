"""The ACL admin the ACL tests share: kafka-python's KafkaAdminClient
(confluent-kafka 1.7.0, Debian's, has no ACL calls), bindings for
User:ANONYMOUS (every plaintext connection's principal), and DescribeAcls
answers as sorted tuples that compare."""

from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                         ResourcePattern, ResourcePatternFilter, ResourceType)

ME = "User:ANONYMOUS"
ANY_FILTER = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                       resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))


def binding(op, resource_type, name, pattern=ACLResourcePatternType.LITERAL, permission=ACLPermissionType.ALLOW,
            principal=ME, host="*"):
    return ACL(principal=principal, host=host, operation=op, permission_type=permission,
               resource_pattern=ResourcePattern(resource_type, name, pattern))


def error_class(e):
    """kafka-python reports an ACL call's failure as an error class or instance."""
    return e if isinstance(e, type) else type(e)


def as_filter(acl):
    """The filter that matches exactly `acl`."""
    p = acl.resource_pattern
    return ACLFilter(principal=acl.principal, host=acl.host, operation=acl.operation,
                     permission_type=acl.permission_type,
                     resource_pattern=ResourcePatternFilter(p.resource_type, p.resource_name, p.pattern_type))


class AclAdmin:
    """An admin client bootstrapped from `bootstrap` (one broker: each call
    goes there), closed on leaving `with`."""

    def __init__(self, bootstrap, client_id="acl-test"):
        self.client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, client_id=client_id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.client.close()
        return False

    def create(self, *acls):
        result = self.client.create_acls(list(acls))
        assert not result["failed"], "create_acls failed: %r" % (result["failed"],)

    def delete(self, *acls):
        for _, matched, _ in self.client.delete_acls([as_filter(x) for x in acls]):
            assert matched, "nothing deleted for %r" % (acls,)

    def listed(self, acl_filter=ANY_FILTER):
        """DescribeAcls' bindings: sorted (type, name, pattern, principal, host, operation, permission)."""
        acls, _ = self.client.describe_acls(acl_filter)
        return sorted((x.resource_pattern.resource_type.name, x.resource_pattern.resource_name,
                       x.resource_pattern.pattern_type.name, x.principal, x.host, x.operation.name,
                       x.permission_type.name) for x in acls)
