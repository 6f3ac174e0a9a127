"""Between the registry and etcd (k8s.io/apiserver pkg/storage): codec.py turns objects into
the bytes the store holds, selection.py is the SelectionPredicate of a list or watch,
watch_cache.py the cacher that fans one etcd watch out to every watcher, fanout.py what the
caches send, compact.py the 5-minute compactor, prefixes.py the etcd key prefix of each
resource (the storage factory's ResourcePrefix: `/registry/minions/` for nodes).
"""
