// (in progress) registers the hash functions
