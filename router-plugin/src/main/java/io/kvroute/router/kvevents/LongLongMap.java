package io.kvroute.router.kvevents;

/**
 * A map from {@code long} to {@code long} without boxing: open addressing, linear probing, and
 * backward-shift deletion (no tombstones, so a map that churns through BlockStored/BlockRemoved
 * never degrades and never needs a rebuild to reclaim cells). Key 0 is the empty-cell marker, so a
 * real key 0 lives in two side fields. Grows at 3/4 load; {@link #clear} returns to the minimum
 * capacity, releasing the memory of a publisher that emptied its cache. The caller bounds the
 * number of entries.
 *
 * <p>Not thread-safe: one owner thread (the events thread).
 */
final class LongLongMap {
    private static final int MIN_CAPACITY = 16;

    private long[] keys = new long[MIN_CAPACITY];
    private long[] values = new long[MIN_CAPACITY];
    private int size;
    private boolean zeroPresent;
    private long zeroValue;

    int size() {
        return size;
    }

    /** Bytes held by the arrays. */
    long bytes() {
        return 2L * keys.length * Long.BYTES;
    }

    /** The cell of {@code key}, or -1 when absent; valid until the next mutation. */
    int find(long key) {
        if (key == 0) {
            return zeroPresent ? keys.length : -1;
        }
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (true) {
            long k = keys[i];
            if (k == key) {
                return i;
            }
            if (k == 0) {
                return -1;
            }
            i = (i + 1) & mask;
        }
    }

    /** The value in a cell returned by {@link #find}. */
    long valueAt(int cell) {
        return cell == keys.length ? zeroValue : values[cell];
    }

    void setValueAt(int cell, long value) {
        if (cell == keys.length) {
            zeroValue = value;
        } else {
            values[cell] = value;
        }
    }

    /** Sets {@code key} to {@code value}; true when the key was new. */
    boolean put(long key, long value) {
        int cell = find(key);
        if (cell >= 0) {
            setValueAt(cell, value);
            return false;
        }
        if (key == 0) {
            zeroPresent = true;
            zeroValue = value;
            size++;
            return true;
        }
        if ((size + 1) * 4L > keys.length * 3L) {
            resize(keys.length * 2);
        }
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (keys[i] != 0) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
        return true;
    }

    /** Removes the entry in a cell returned by {@link #find}. */
    void removeAt(int cell) {
        if (cell == keys.length) {
            zeroPresent = false;
            zeroValue = 0;
            size--;
            return;
        }
        int mask = keys.length - 1;
        int hole = cell;
        int j = cell;
        while (true) {
            j = (j + 1) & mask;
            long k = keys[j];
            if (k == 0) {
                break;
            }
            int ideal = slot(k, mask);
            // k may fill the hole when the hole lies on its probe path, i.e. between ideal and j
            if (((j - ideal) & mask) >= ((j - hole) & mask)) {
                keys[hole] = k;
                values[hole] = values[j];
                hole = j;
            }
        }
        keys[hole] = 0;
        values[hole] = 0;
        size--;
    }

    /** Removes {@code key}; true when it was present. */
    boolean remove(long key) {
        int cell = find(key);
        if (cell < 0) {
            return false;
        }
        removeAt(cell);
        return true;
    }

    void clear() {
        keys = new long[MIN_CAPACITY];
        values = new long[MIN_CAPACITY];
        size = 0;
        zeroPresent = false;
        zeroValue = 0;
    }

    private void resize(int capacity) {
        long[] oldKeys = keys;
        long[] oldValues = values;
        keys = new long[capacity];
        values = new long[capacity];
        int mask = capacity - 1;
        for (int c = 0; c < oldKeys.length; c++) {
            long k = oldKeys[c];
            if (k != 0) {
                int i = slot(k, mask);
                while (keys[i] != 0) {
                    i = (i + 1) & mask;
                }
                keys[i] = k;
                values[i] = oldValues[c];
            }
        }
    }

    /** murmur3's finalizer: engine hashes are uniform, but a hostile publisher's need not be. */
    private static int slot(long k, int mask) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        return (int) k & mask;
    }
}
