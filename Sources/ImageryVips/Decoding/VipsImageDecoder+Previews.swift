import Foundation
import Imagery

/// Previews of progressive JPEGs while they download (`ImagePipeline.ProgressivePreviews`): the
/// scans counted by ``JPEGScanCounter``, decoded as the whole image would be (the same size,
/// orientation and recipe) with damage allowed, since the data is cut short on purpose: libjpeg
/// meets the end of the data where the next scan would begin and decodes the scans so far (block
/// smoothing fills in the coefficients not yet sent).
///
/// Interlaced PNG and GIF give no previews: libvips reads neither from partial data (its PNG and
/// GIF loaders decode whole passes or frames only, and a cut file fails or leaves the missing rows
/// blank rather than filling them from the passes so far as browsers do).
extension VipsImageDecoder: ProgressiveDecoding {
    public func makeScanCounter() -> any ScanCounting {
        JPEGScanCounter()
    }

    public func decodePreview(_ data: Data, recipe: ImageRecipe) throws -> Image {
        var lenient = self
        lenient.rejectsCorruptData = false
        return try lenient.decode(data, recipe: recipe)
    }
}
